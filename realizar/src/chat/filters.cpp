// The filters and tests real chat templates use. Unknown names are refused by the parser (is_filter,
// is_test), so a template fails when loaded, not halfway through a conversation.
#include <algorithm>
#include <cmath>

#include "chat/builtins.h"

namespace realizar::chat {
namespace {

const char* const kFilters[] = {"abs", "capitalize", "count", "d", "default", "first", "float", "indent", "int", "items", "join",
                                "last", "length", "list", "lower", "map", "reject", "rejectattr", "replace", "reverse", "round",
                                "safe", "select", "selectattr", "sort", "string", "sum", "title", "tojson", "trim", "unique", "upper"};
const char* const kTests[] = {"boolean", "callable", "defined", "divisibleby", "eq", "equalto", "even", "false", "float", "ge", "gt",
                              "in", "integer", "iterable", "le", "lower", "lt", "mapping", "ne", "none", "number", "odd", "sameas",
                              "sequence", "string", "true", "undefined", "upper"};

template <std::size_t N>
std::string joined(const char* const (&names)[N]) {
  std::string s;
  for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

Value attribute_path(const Site& at, const Value& x, const std::string& path) {  // map(attribute='a.b')
  Value v = x;
  std::size_t i = 0;
  while (true) {
    const std::size_t dot = path.find('.', i);
    const std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    v = get_attr(at, v, part, "item");
    if (dot == std::string::npos) return v;
    i = dot + 1;
  }
}

// select/reject(test, args...) and selectattr/rejectattr(attr, test, args...).
Value select(const Site& at, const std::string& name, const Value& subject, const CallArgs& a) {
  const bool attr = name.ends_with("attr"), keep = name.starts_with("select");
  CallArgs rest;
  std::size_t first = 0;
  std::string attr_name;
  if (attr) {
    if (a.args.empty() || !a.args[0].is_string()) at.fail("filter '" + name + "'", "needs an attribute name");
    attr_name = a.args[0].as_string();
    first = 1;
  }
  std::string test;
  if (a.args.size() > first) {
    if (!a.args[first].is_string()) at.fail("filter '" + name + "'", "the test must be named by a string");
    test = a.args[first].as_string();
    if (!is_test(test)) at.fail("filter '" + name + "'", "test '" + test + "' is not supported (supported: " + test_names() + ")");
    rest.args.assign(a.args.begin() + static_cast<std::ptrdiff_t>(first + 1), a.args.end());
  }
  List out;
  for (const auto& item : iterate(at, subject, "the filter's input")) {
    const Value v = attr ? attribute_path(at, item, attr_name) : item;
    const bool pass = test.empty() ? v.truthy() : apply_test(at, test, v, rest);
    if (pass == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

bool less(const Site& at, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_float() < b.as_float();
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  at.fail("filter 'sort'", "cannot compare " + describe(a) + " with " + describe(b));
}

}  // namespace

bool is_filter(std::string_view n) { return std::find(std::begin(kFilters), std::end(kFilters), n) != std::end(kFilters); }
bool is_test(std::string_view n) { return std::find(std::begin(kTests), std::end(kTests), n) != std::end(kTests); }
std::string filter_names() { return joined(kFilters); }
std::string test_names() { return joined(kTests); }

Value apply_filter(const Site& at, const std::string& name, const Value& x, CallArgs& a) {
  const std::string what = "filter '" + name + "'";
  const auto need_string = [&]() -> const std::string& {
    if (!x.is_string()) at.fail(what, "needs a string, not " + describe(x));
    return x.as_string();
  };
  if (name == "default" || name == "d") {
    const Value* b = arg(a, 1, "boolean");
    if (x.is_undefined() || (b && b->truthy() && !x.truthy())) {
      const Value* v = arg(a, 0, "default_value");
      return v ? *v : Value("");
    }
    return x;
  }
  if (name == "safe") return x;
  if (name == "string") return x.str();
  if (name == "tojson") {
    const Value* indent = arg(a, 0, "indent");
    return x.json(indent && indent->kind() == Value::Kind::Int ? static_cast<int>(std::clamp<std::int64_t>(indent->as_int(), 0, 64)) : -1);
  }
  if (name == "length" || name == "count") {
    if (x.is_string()) return static_cast<std::int64_t>(utf8_length(x.as_string()));
    if (x.is_list()) return static_cast<std::int64_t>(x.list().size());
    if (x.is_dict()) return static_cast<std::int64_t>(x.dict().items.size());
    if (x.is_undefined()) return std::int64_t{0};
    at.fail(what, "needs a string, list or dict, not " + describe(x));
  }
  if (name == "trim") return strip(need_string(), arg(a, 0, "chars"), true, true);
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") return change_case(x.str(), name[0]);
  if (name == "replace") {
    const std::string& s = need_string();
    const Value* o = arg(a, 0, "old");
    const Value* n = arg(a, 1, "new");
    if (!o || !n || !o->is_string() || !n->is_string()) at.fail(what, "needs two strings: old and new");
    const Value* c = arg(a, 2, "count");
    std::int64_t count = c && c->kind() == Value::Kind::Int ? c->as_int() : -1;
    const std::string& from = o->as_string();
    std::string out;
    std::size_t i = 0, j;
    if (from.empty()) return s;  // (Python inserts between characters; no template does this)
    while (count-- != 0 && (j = s.find(from, i)) != std::string::npos) {
      out.append(s, i, j - i).append(n->as_string());
      i = j + from.size();
    }
    return out.append(s, i);
  }
  if (name == "items") {
    if (x.is_undefined()) return Value(List{});
    if (!x.is_dict()) at.fail(what, "needs a dict, not " + describe(x));
    CallArgs none;
    return call_method(at, x, "items", none);
  }
  if (name == "list") return Value(iterate(at, x, "the filter's input"));
  if (name == "first" || name == "last") {
    List l = iterate(at, x, "the filter's input");
    if (l.empty()) return Value::undefined("the " + name + " item of an empty sequence");
    return name == "first" ? l.front() : l.back();
  }
  if (name == "reverse") {
    if (x.is_string()) {
      List chars = iterate(at, x, "");
      std::string s;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) s += it->as_string();
      return s;
    }
    List l = iterate(at, x, "the filter's input");
    std::reverse(l.begin(), l.end());
    return Value(std::move(l));
  }
  if (name == "join") {
    const Value* sep = arg(a, 0, "d");
    const Value* attr = arg(a, 1, "attribute");
    std::string out;
    bool first = true;
    for (const auto& v : iterate(at, x, "the filter's input")) {
      out += (first ? "" : sep ? sep->str() : "") + (attr ? attribute_path(at, v, attr->str()).str() : v.str());
      first = false;
    }
    return out;
  }
  if (name == "map") {
    const Value* attr = arg(a, 99, "attribute");
    List out;
    for (const auto& v : iterate(at, x, "the filter's input")) {
      if (attr) {
        out.push_back(attribute_path(at, v, attr->str()));
      } else {
        if (a.args.empty() || !a.args[0].is_string() || !is_filter(a.args[0].as_string()))
          at.fail(what, "needs attribute='name' or the name of a supported filter");
        CallArgs rest;
        rest.args.assign(a.args.begin() + 1, a.args.end());
        out.push_back(apply_filter(at, a.args[0].as_string(), v, rest));
      }
    }
    return Value(std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") return select(at, name, x, a);
  if (name == "unique") {
    List out;
    for (const auto& v : iterate(at, x, "the filter's input"))
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return Value(std::move(out));
  }
  if (name == "sort") {
    List l = iterate(at, x, "the filter's input");
    const Value* rev = arg(a, 0, "reverse");
    const Value* attr = arg(a, 2, "attribute");
    const auto key = [&](const Value& v) { return attr ? attribute_path(at, v, attr->str()) : v; };
    std::stable_sort(l.begin(), l.end(), [&](const Value& p, const Value& q) { return less(at, key(p), key(q)); });
    if (rev && rev->truthy()) std::reverse(l.begin(), l.end());
    return Value(std::move(l));
  }
  if (name == "sum") {
    Value total = std::int64_t{0};
    for (const auto& v : iterate(at, x, "the filter's input")) {
      if (!v.is_number()) at.fail(what, "needs numbers, not " + describe(v));
      total = total.kind() == Value::Kind::Float || v.kind() == Value::Kind::Float ? Value(total.as_float() + v.as_float())
                                                                                 : Value(total.as_int() + v.as_int());
    }
    return total;
  }
  if (name == "int" || name == "float") {
    const Value* d = arg(a, 0, "default");
    double f = 0;
    bool ok = x.is_number() || x.kind() == Value::Kind::Bool;
    if (ok) f = x.as_float();
    if (x.is_string()) {
      const std::string s = strip(x.as_string(), nullptr, true, true);
      char* end = nullptr;
      f = std::strtod(s.c_str(), &end);
      ok = !s.empty() && end == s.c_str() + s.size();
    }
    if (!ok) return d ? *d : name == "int" ? Value(std::int64_t{0}) : Value(0.0);
    if (name == "float") return f;
    if (!(std::fabs(f) < 9.2e18)) at.fail(what, "the number is out of range");
    return static_cast<std::int64_t>(x.kind() == Value::Kind::Int ? x.as_int() : static_cast<std::int64_t>(f));
  }
  if (name == "abs") {
    if (x.kind() == Value::Kind::Float) return std::fabs(x.as_float());
    if (x.kind() == Value::Kind::Int && x.as_int() != INT64_MIN) return x.as_int() < 0 ? -x.as_int() : x.as_int();
    at.fail(what, "needs a number, not " + describe(x));
  }
  if (name == "round") {
    if (!x.is_number()) at.fail(what, "needs a number, not " + describe(x));
    const Value* p = arg(a, 0, "precision");
    const double scale = std::pow(10.0, p && p->kind() == Value::Kind::Int ? static_cast<double>(std::clamp<std::int64_t>(p->as_int(), -20, 20)) : 0.0);
    return std::round(x.as_float() * scale) / scale;
  }
  if (name == "indent") {
    const std::string& s = need_string();
    const Value* w = arg(a, 0, "width");
    const Value* first = arg(a, 1, "first");
    const std::string pad = w && w->is_string() ? w->as_string() : std::string(static_cast<std::size_t>(std::clamp<std::int64_t>(w ? w->as_int() : 4, 0, 256)), ' ');
    std::string out = first && first->truthy() && !s.empty() ? pad : "";
    for (std::size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\n' && i + 1 < s.size() && s[i + 1] != '\n') out += pad;
    }
    return out;
  }
  at.fail(what, "is not supported");
}

bool apply_test(const Site& at, const std::string& name, const Value& x, const CallArgs& a) {
  using K = Value::Kind;
  const Value* other = arg(a, 0, "");
  const auto need_other = [&]() -> const Value& {
    if (!other) at.fail("test '" + name + "'", "needs a value to compare with");
    return *other;
  };
  if (name == "defined") return !x.is_undefined();
  if (name == "undefined") return x.is_undefined();
  if (name == "none") return x.is_none();
  if (name == "string") return x.is_string();
  if (name == "number") return x.is_number();
  if (name == "integer") return x.kind() == K::Int;
  if (name == "float") return x.kind() == K::Float;
  if (name == "boolean") return x.kind() == K::Bool;
  if (name == "true") return x.kind() == K::Bool && x.as_bool();
  if (name == "false") return x.kind() == K::Bool && !x.as_bool();
  if (name == "mapping") return x.is_dict();
  if (name == "iterable") return x.is_list() || x.is_dict() || x.is_string();
  if (name == "sequence") return x.is_list() || x.is_dict() || x.is_string();
  if (name == "callable") return x.kind() == K::Function;
  if (name == "lower" || name == "upper") return x.is_string() && change_case(x.as_string(), name[0]) == x.as_string();
  if (name == "eq" || name == "equalto" || name == "sameas") return x == need_other();
  if (name == "ne") return !(x == need_other());
  if (name == "in") {
    const Value& c = need_other();
    if (c.is_string()) return x.is_string() && c.as_string().find(x.as_string()) != std::string::npos;
    if (c.is_dict()) return x.is_string() && c.dict().find(x.as_string()) != nullptr;
    const List l = iterate(at, c, "the test's argument");
    return std::find(l.begin(), l.end(), x) != l.end();
  }
  if (name == "lt" || name == "le" || name == "gt" || name == "ge") {
    const Value& o = need_other();
    if (!x.is_number() || !o.is_number()) at.fail("test '" + name + "'", "needs numbers, not " + describe(x) + " and " + describe(o));
    const double p = x.as_float(), q = o.as_float();
    return name == "lt" ? p < q : name == "le" ? p <= q : name == "gt" ? p > q : p >= q;
  }
  if (x.kind() != K::Int && x.kind() != K::Bool) at.fail("test '" + name + "'", "needs an integer, not " + describe(x));
  if (name == "even") return x.as_int() % 2 == 0;
  if (name == "odd") return x.as_int() % 2 != 0;
  if (name == "divisibleby") {
    const Value& d = need_other();
    if (d.kind() != K::Int || d.as_int() == 0) at.fail("test 'divisibleby'", "needs a non-zero integer");
    return x.as_int() % d.as_int() == 0;
  }
  at.fail("test '" + name + "'", "is not supported");
}

}  // namespace realizar::chat
