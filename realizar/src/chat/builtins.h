// Filters, tests, methods of strings/dicts/lists and the global functions templates call.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "chat/source.h"
#include "realizar/chat_value.h"

namespace realizar::chat {

// Where a built-in was used, for its errors.
struct Site {
  const Source& src;
  std::size_t pos;
  [[noreturn]] void fail(const std::string& construct, const std::string& message) const { src.fail(pos, construct, message); }
};

bool is_filter(std::string_view name);
bool is_test(std::string_view name);
std::string filter_names();  // comma-separated, for "not supported (supported: ...)"
std::string test_names();

Value apply_filter(const Site& at, const std::string& name, const Value& subject, CallArgs& args);
bool apply_test(const Site& at, const std::string& name, const Value& subject, const CallArgs& args);
// self.name(args) for Python's str/dict/list methods that templates use; throws naming unknown ones.
Value call_method(const Site& at, const Value& self, const std::string& name, CallArgs& args);
bool has_method(const Value& self, std::string_view name);

// x.name and x[key] with Jinja's rules: a missing key or index is undefined; undefined and none fail.
Value get_attr(const Site& at, const Value& x, const std::string& name, const std::string& what);
Value get_item(const Site& at, const Value& x, const Value& key, const std::string& what);
// The elements a for loop visits (a dict's keys, a string's characters); undefined is empty.
List iterate(const Site& at, const Value& x, const std::string& what);

// raise_exception, range, namespace, dict, strftime_now.
void add_globals(Dict& globals, const Source& src);

// Python's str.strip(chars) (chars null: whitespace) and ASCII case changes: 'u'pper, 'l'ower,
// 't'itle, 'c'apitalize.
std::string strip(const std::string& s, const Value* chars, bool left, bool right);
std::string change_case(const std::string& s, char mode);

// Argument helpers: the i-th positional or the keyword `key`, or fallback.
const Value* arg(const CallArgs& a, std::size_t i, std::string_view key);
std::string describe(const Value& v);  // "the string 'abc'" / "a list of 3" for errors

}  // namespace realizar::chat
