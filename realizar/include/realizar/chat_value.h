// The values a chat template computes with: Python's none/bool/int/float/str/list/dict as Jinja sees
// them, plus "undefined" (a missing variable or key) and callables (macros, namespace(), range()).
// Lists and dicts are shared on copy, as Python's are, so `set ns.x = ...` changes every reference.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace realizar::chat {

class Value;
using List = std::vector<Value>;
struct Dict;

// Arguments of a call: positional, then keyword; pos is the call's offset in the template (for errors).
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  std::size_t pos = 0;
};
using Function = std::function<Value(CallArgs&)>;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

  Value() = default;  // undefined
  Value(std::nullptr_t) : kind_(Kind::None) {}
  Value(bool b) : kind_(Kind::Bool), i_(b) {}
  Value(int i) : kind_(Kind::Int), i_(i) {}
  Value(std::int64_t i) : kind_(Kind::Int), i_(i) {}
  Value(double f) : kind_(Kind::Float), f_(f) {}
  Value(std::string s) : kind_(Kind::String), s_(std::move(s)) {}
  Value(std::string_view s) : kind_(Kind::String), s_(s) {}
  Value(const char* s) : kind_(Kind::String), s_(s) {}
  Value(List l);
  Value(Dict d);
  static Value undefined(std::string name);  // name: what was looked up, for "'x' is undefined"
  static Value function(std::string name, Function f);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }

  bool as_bool() const { return i_ != 0; }
  std::int64_t as_int() const { return i_; }
  double as_float() const { return kind_ == Kind::Float ? f_ : static_cast<double>(i_); }
  const std::string& as_string() const { return s_; }  // strings; the undefined's name; a function's name
  List& list() const { return *list_; }
  Dict& dict() const { return *dict_; }
  const Function& fn() const { return *fn_; }

  bool truthy() const;               // Python's bool()
  std::string str() const;           // Python's str(); undefined prints nothing
  std::string repr() const;          // Python's repr() (strings quoted), for lists and dicts inside str()
  std::string json(int indent = -1) const;  // json.dumps(ensure_ascii=False), as transformers' tojson
  std::string type_name() const;     // "string", "list", ... for error messages
  bool operator==(const Value& o) const;

 private:
  Kind kind_ = Kind::Undefined;
  std::int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  std::shared_ptr<List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<Function> fn_;
};

// Insertion-ordered, as Python's dicts (templates print tools in the order given).
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // namespace(): `set ns.attr = ...` may assign to it
  const Value* find(std::string_view key) const;
  void set(std::string key, Value v);
};

}  // namespace realizar::chat
