// Attribute and item access, iteration, slices, Python's str/dict methods, and the global functions.
#include <algorithm>
#include <cctype>
#include <ctime>

#include "chat/builtins.h"

namespace realizar::chat {

const Value* arg(const CallArgs& a, std::size_t i, std::string_view key) {
  for (const auto& [k, v] : a.kwargs)
    if (k == key) return &v;
  return i < a.args.size() ? &a.args[i] : nullptr;
}

std::string describe(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "undefined ('" + v.as_string() + "')";
    case Value::Kind::None: return "none";
    case Value::Kind::List: return "a list of " + std::to_string(v.list().size());
    case Value::Kind::Dict: return v.dict().is_namespace ? "a namespace" : "a dict";
    case Value::Kind::Function: return "the function " + v.as_string();
    default: {
      std::string r = v.repr();
      if (r.size() > 40) r = r.substr(0, 37) + "...";
      return "the " + v.type_name() + " " + r;
    }
  }
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

void utf8_offsets(std::string_view s, std::basic_string<std::size_t>& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) out.push_back(i);
  out.push_back(s.size());
}

Value get_attr(const Site& at, const Value& x, const std::string& name, const std::string& what) {
  if (x.is_undefined()) at.fail("attribute '" + name + "'", "'" + x.as_string() + "' is undefined");
  if (x.is_none()) at.fail("attribute '" + name + "'", what + " is none");
  if (x.is_dict())
    if (const Value* v = x.dict().find(name)) return *v;
  return Value::undefined(what + "." + name);
}

Value get_item(const Site& at, const Value& x, const Value& key, const std::string& what) {
  const std::string name = what + "[" + key.repr() + "]";
  if (x.is_undefined()) at.fail("subscript " + name, "'" + x.as_string() + "' is undefined");
  if (x.is_dict()) {
    const Value* v = key.is_string() ? x.dict().find(key.as_string()) : nullptr;
    return v ? *v : Value::undefined(name);
  }
  if ((x.is_list() || x.is_string()) && (key.kind() == Value::Kind::Int || key.kind() == Value::Kind::Bool)) {
    std::basic_string<std::size_t> offs;
    if (x.is_string()) utf8_offsets(x.as_string(), offs);
    const auto n = static_cast<std::int64_t>(x.is_list() ? x.list().size() : offs.size() - 1);
    std::int64_t i = key.as_int();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined(name);
    const auto u = static_cast<std::size_t>(i);
    return x.is_list() ? x.list()[u] : Value(x.as_string().substr(offs[u], offs[u + 1] - offs[u]));
  }
  if (x.is_list() || x.is_string()) at.fail("subscript " + name, "a " + x.type_name() + " index must be an integer, not " + describe(key));
  at.fail("subscript " + name, what + " is " + describe(x) + ", which cannot be indexed");
}

List iterate(const Site& at, const Value& x, const std::string& what) {
  switch (x.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return x.list();
    case Value::Kind::Dict: {
      List keys;
      for (const auto& kv : x.dict().items) keys.emplace_back(kv.first);
      return keys;
    }
    case Value::Kind::String: {
      std::basic_string<std::size_t> offs;
      utf8_offsets(x.as_string(), offs);
      List chars;
      for (std::size_t i = 0; i + 1 < offs.size(); ++i) chars.emplace_back(x.as_string().substr(offs[i], offs[i + 1] - offs[i]));
      return chars;
    }
    default: at.fail("iteration", what + " is " + describe(x) + ", which cannot be iterated");
  }
}

namespace {

std::int64_t int_arg(const Site& at, const Value* v, std::int64_t fallback, const std::string& what) {
  if (!v || v->is_none() || v->is_undefined()) return fallback;
  if (v->kind() != Value::Kind::Int && v->kind() != Value::Kind::Bool) at.fail(what, "needs an integer, not " + describe(*v));
  return v->as_int();
}

std::string str_arg(const Site& at, const Value* v, const std::string& what) {
  if (!v || !v->is_string()) at.fail(what, "needs a string argument" + (v ? ", not " + describe(*v) : std::string()));
  return v->as_string();
}

Value slice(const Site& at, const Value& x, CallArgs& a) {
  const bool str = x.is_string();
  if (!str && !x.is_list()) at.fail("slice", "needs a string or list, not " + describe(x));
  std::basic_string<std::size_t> offs;
  if (str) utf8_offsets(x.as_string(), offs);
  const auto n = static_cast<std::int64_t>(str ? offs.size() - 1 : x.list().size());
  const std::int64_t step = int_arg(at, arg(a, 2, ""), 1, "slice step");
  if (step == 0) at.fail("slice", "step cannot be zero");
  const auto norm = [&](const Value* v, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    if (!v || v->is_none() || v->is_undefined()) return fallback;
    std::int64_t i = int_arg(at, v, 0, "slice bound");
    if (i < 0) i += n;
    return std::clamp(i, lo, hi);
  };
  const std::int64_t start = step > 0 ? norm(arg(a, 0, ""), 0, 0, n) : norm(arg(a, 0, ""), n - 1, -1, n - 1);
  const std::int64_t stop = step > 0 ? norm(arg(a, 1, ""), n, 0, n) : norm(arg(a, 1, ""), -1, -1, n - 1);
  std::string s;
  List l;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    const auto u = static_cast<std::size_t>(i);
    if (str) s.append(x.as_string(), offs[u], offs[u + 1] - offs[u]);
    else l.push_back(x.list()[u]);
  }
  return str ? Value(std::move(s)) : Value(std::move(l));
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::string strip(const std::string& s, const Value* chars, bool left, bool right) {
  const auto drop = [&](char c) { return chars && chars->is_string() ? chars->as_string().find(c) != std::string::npos : space(c); };
  std::size_t a = 0, b = s.size();
  while (left && a < b && drop(s[a])) ++a;
  while (right && b > a && drop(s[b - 1])) --b;
  return s.substr(a, b - a);
}

std::string change_case(const std::string& s, char mode) {  // 'u'pper, 'l'ower, 't'itle, 'c'apitalize (ASCII)
  std::string out = s;
  bool word_start = true;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    const bool letter = std::isalpha(c) != 0;
    bool up = mode == 'u' || (mode == 't' && word_start) || (mode == 'c' && i == 0);
    out[i] = static_cast<char>(up ? std::toupper(c) : mode == 'u' ? c : std::tolower(c));
    word_start = !letter && !(c & 0x80);
  }
  return out;
}

bool has_method(const Value& self, std::string_view name) {
  if (self.is_dict()) return !self.dict().is_namespace && (name == "items" || name == "keys" || name == "values" || name == "get");
  return false;
}

Value call_method(const Site& at, const Value& self, const std::string& name, CallArgs& a) {
  if (name == "__slice__") return slice(at, self, a);
  const std::string what = "method " + self.type_name() + "." + name + "()";
  if (self.is_string()) {
    const std::string& s = self.as_string();
    if (name == "strip" || name == "lstrip" || name == "rstrip")
      return strip(s, arg(a, 0, "chars"), name != "rstrip", name != "lstrip");
    if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") return change_case(s, name[0] == 'u' ? 'u' : name[0] == 'l' ? 'l' : name[0]);
    if (name == "startswith" || name == "endswith") {
      const Value* p = arg(a, 0, "prefix");
      List options = p && p->is_list() ? p->list() : List{p ? *p : Value()};
      for (const auto& o : options) {
        const std::string x = str_arg(at, &o, what);
        if (name == "startswith" ? s.starts_with(x) : s.ends_with(x)) return true;
      }
      return false;
    }
    if (name == "split" || name == "rsplit") {
      const Value* sep = arg(a, 0, "sep");
      std::int64_t max = int_arg(at, arg(a, 1, "maxsplit"), -1, what);
      List parts;
      if (!sep || sep->is_none()) {
        std::size_t i = 0;
        while (true) {
          while (i < s.size() && space(s[i])) ++i;
          if (i >= s.size()) break;
          std::size_t j = i;
          if (max-- == 0) j = s.size();
          else while (j < s.size() && !space(s[j])) ++j;
          parts.emplace_back(s.substr(i, j - i));
          i = j;
        }
        return Value(std::move(parts));
      }
      const std::string d = str_arg(at, sep, what);
      if (d.empty()) at.fail(what, "empty separator");
      std::size_t i = 0, j;
      while (max-- != 0 && (j = s.find(d, i)) != std::string::npos) {
        parts.emplace_back(s.substr(i, j - i));
        i = j + d.size();
      }
      parts.emplace_back(s.substr(i));
      return Value(std::move(parts));
    }
    if (name == "replace") {
      CallArgs b = a;
      return apply_filter(at, "replace", self, b);
    }
    if (name == "find") {
      const std::size_t p = s.find(str_arg(at, arg(a, 0, "sub"), what));
      return p == std::string::npos ? std::int64_t{-1} : static_cast<std::int64_t>(utf8_length(s.substr(0, p)));
    }
    if (name == "join") {
      CallArgs b;
      b.args.push_back(self);
      const Value* items = arg(a, 0, "iterable");
      return apply_filter(at, "join", items ? *items : Value(List{}), b);
    }
  } else if (self.is_dict() && has_method(self, name)) {
    if (name == "get") {
      const Value* k = arg(a, 0, "key");
      const Value* v = k && k->is_string() ? self.dict().find(k->as_string()) : nullptr;
      const Value* d = arg(a, 1, "default");
      return v ? *v : d ? *d : Value(nullptr);
    }
    List out;
    for (const auto& [k, v] : self.dict().items)
      out.push_back(name == "keys" ? Value(k) : name == "values" ? v : Value(List{Value(k), v}));
    return Value(std::move(out));
  }
  at.fail(what, "is not supported (strings: strip, lstrip, rstrip, upper, lower, title, capitalize, startswith, endswith, "
                "split, replace, find, join; dicts: items, keys, values, get)");
}

void add_globals(Dict& g, const Source& src) {
  g.set("raise_exception", Value::function("raise_exception", [&src](CallArgs& a) -> Value {
    src.fail(a.pos, "raise_exception", "the template raised: " + (a.args.empty() ? std::string("(no message)") : a.args[0].str()));
  }));
  g.set("range", Value::function("range", [&src](CallArgs& a) -> Value {
    const Site at{src, a.pos};
    if (a.args.empty() || a.args.size() > 3) at.fail("range()", "takes 1 to 3 integers");
    const bool one = a.args.size() == 1;
    const std::int64_t start = one ? 0 : int_arg(at, &a.args[0], 0, "range()");
    const std::int64_t stop = int_arg(at, &a.args[one ? 0 : 1], 0, "range()");
    const std::int64_t step = a.args.size() == 3 ? int_arg(at, &a.args[2], 1, "range()") : 1;
    if (step == 0) at.fail("range()", "step cannot be zero");
    List l;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (l.size() >= 1000000) at.fail("range()", "more than 1000000 numbers");
      l.emplace_back(i);
    }
    return Value(std::move(l));
  }));
  const auto make_dict = [&src](bool ns) {
    return [&src, ns](CallArgs& a) -> Value {
      Dict d;
      d.is_namespace = ns;
      for (const auto& p : a.args) {
        if (!p.is_dict()) src.fail(a.pos, ns ? "namespace()" : "dict()", "positional arguments must be dicts, not " + describe(p));
        for (const auto& [k, v] : p.dict().items) d.set(k, v);
      }
      for (const auto& [k, v] : a.kwargs) d.set(k, v);
      return Value(std::move(d));
    };
  };
  g.set("namespace", Value::function("namespace", make_dict(true)));
  g.set("dict", Value::function("dict", make_dict(false)));
  g.set("strftime_now", Value::function("strftime_now", [&src](CallArgs& a) -> Value {
    const std::string fmt = str_arg(Site{src, a.pos}, arg(a, 0, "format"), "strftime_now()");
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[256];
    const std::size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return std::string(buf, n);
  }));
}

}  // namespace realizar::chat
