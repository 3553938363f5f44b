// Value: Python semantics for truth, str(), repr(), equality and json.dumps.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "realizar/chat_value.h"

namespace realizar::chat {

Value::Value(List l) : kind_(Kind::List), list_(std::make_shared<List>(std::move(l))) {}
Value::Value(Dict d) : kind_(Kind::Dict), dict_(std::make_shared<Dict>(std::move(d))) {}

Value Value::undefined(std::string name) {
  Value v;
  v.s_ = std::move(name);
  return v;
}

Value Value::function(std::string name, Function f) {
  Value v;
  v.kind_ = Kind::Function;
  v.s_ = std::move(name);
  v.fn_ = std::make_shared<Function>(std::move(f));
  return v;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string key, Value v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(std::move(key), std::move(v));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined: case Kind::None: return false;
    case Kind::Bool: case Kind::Int: return i_ != 0;
    case Kind::Float: return f_ != 0;
    case Kind::String: return !s_.empty();
    case Kind::List: return !list_->empty();
    case Kind::Dict: return dict_->is_namespace || !dict_->items.empty();
    case Kind::Function: return true;
  }
  return false;
}

namespace {

// Python's float repr: the shortest digits that read back the same value, positioned as Python does
// (fixed for decimal exponents -4..15, else d.ddde+XX), always with a '.' or an exponent. (printf and
// strtod rather than std::to_chars: emscripten 3.1.6's libc++ has no floating-point to_chars.)
std::string float_text(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  const std::string e = buf;  // [-]d[.ddd]e[+-]XX
  const std::size_t epos = e.find('e');
  const bool negative = e[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < epos; ++i)
    if (e[i] != '.') digits += e[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp = std::atoi(e.c_str() + epos + 1);
  std::string s = negative ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      s += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    } else {
      const std::size_t point = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= point) s += digits + std::string(point - digits.size(), '0') + ".0";
      else s += digits.substr(0, point) + "." + digits.substr(point);
    }
    return s;
  }
  s += digits.substr(0, 1);
  if (digits.size() > 1) s += "." + digits.substr(1);
  char ex[16];
  std::snprintf(ex, sizeof ex, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return s + ex;
}

std::string quoted(const std::string& s, char q, bool json) {
  std::string out(1, q);
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(q)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || (!json && c == 0x7f)) {
          char esc[8];
          std::snprintf(esc, sizeof esc, json ? "\\u%04x" : "\\x%02x", c);
          out += esc;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + q;
}

}  // namespace

std::string Value::str() const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::String: return s_;
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return i_ ? "True" : "False";
    case Kind::Int: return std::to_string(i_);
    case Kind::Float: return float_text(f_);
    case Kind::String: {
      const bool dq = s_.find('\'') != std::string::npos && s_.find('"') == std::string::npos;
      return quoted(s_, dq ? '"' : '\'', false);
    }
    case Kind::List: {
      std::string out = "[";
      for (std::size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = dict_->is_namespace ? "<Namespace {" : "{";
      for (std::size_t i = 0; i < dict_->items.size(); ++i)
        out += (i ? ", " : "") + Value(dict_->items[i].first).repr() + ": " + dict_->items[i].second.repr();
      return out + (dict_->is_namespace ? "}>" : "}");
    }
    case Kind::Function: return "<function " + s_ + ">";
  }
  return "";
}

std::string Value::json(int indent) const {
  const auto nl = [&](int level) { return indent < 0 ? std::string() : "\n" + std::string(static_cast<std::size_t>(indent * level), ' '); };
  std::function<std::string(const Value&, int)> dump = [&](const Value& v, int level) -> std::string {
    switch (v.kind_) {
      case Kind::Undefined: case Kind::None: case Kind::Function: return "null";
      case Kind::Bool: return v.i_ ? "true" : "false";
      case Kind::Int: return std::to_string(v.i_);
      case Kind::Float: return std::isfinite(v.f_) ? float_text(v.f_) : (std::isnan(v.f_) ? "NaN" : v.f_ < 0 ? "-Infinity" : "Infinity");
      case Kind::String: return quoted(v.s_, '"', true);
      case Kind::List: {
        if (v.list_->empty()) return "[]";
        std::string out = "[";
        for (std::size_t i = 0; i < v.list_->size(); ++i)
          out += (i ? (indent < 0 ? ", " : ",") : "") + nl(level + 1) + dump((*v.list_)[i], level + 1);
        return out + nl(level) + "]";
      }
      case Kind::Dict: {
        if (v.dict_->items.empty()) return "{}";
        std::string out = "{";
        for (std::size_t i = 0; i < v.dict_->items.size(); ++i)
          out += (i ? (indent < 0 ? ", " : ",") : "") + nl(level + 1) + quoted(v.dict_->items[i].first, '"', true) + ": " +
                 dump(v.dict_->items[i].second, level + 1);
        return out + nl(level) + "}";
      }
    }
    return "null";
  };
  return dump(*this, 0);
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "none";
    case Kind::Bool: return "boolean";
    case Kind::Int: return "integer";
    case Kind::Float: return "float";
    case Kind::String: return "string";
    case Kind::List: return "list";
    case Kind::Dict: return dict_->is_namespace ? "namespace" : "dict";
    case Kind::Function: return "function";
  }
  return "?";
}

bool Value::operator==(const Value& o) const {
  const bool num = kind_ == Kind::Bool || kind_ == Kind::Int || kind_ == Kind::Float;
  const bool onum = o.kind_ == Kind::Bool || o.kind_ == Kind::Int || o.kind_ == Kind::Float;
  if (num && onum) return (kind_ == Kind::Float || o.kind_ == Kind::Float) ? as_float() == o.as_float() : i_ == o.i_;
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Undefined: case Kind::None: return true;
    case Kind::String: return s_ == o.s_;
    case Kind::List: return *list_ == *o.list_;
    case Kind::Dict: {
      if (dict_ == o.dict_) return true;
      if (dict_->items.size() != o.dict_->items.size()) return false;
      for (const auto& [k, v] : dict_->items) {
        const Value* w = o.dict_->find(k);
        if (!w || !(v == *w)) return false;
      }
      return true;
    }
    case Kind::Function: return fn_ == o.fn_;
    default: return false;
  }
}

}  // namespace realizar::chat
