// GGUF metadata values: type names, checked conversions, printing.
#include <cmath>
#include <limits>

#include "realizar/gguf.h"
#include "util/strcat.h"

namespace realizar::gguf {

std::string_view type_name(ValueType t) {
  static constexpr std::string_view kNames[] = {"u8",  "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                                "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64:
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64: return true;
    default: return false;
  }
}

namespace {
bool is_signed(ValueType t) {
  return t == ValueType::I8 || t == ValueType::I16 || t == ValueType::I32 || t == ValueType::I64;
}
}  // namespace

std::uint64_t Value::as_uint(std::string_view key) const {
  if ((is_integer() && !is_signed(type)) || type == ValueType::Bool) return u;
  if (is_signed(type) && i >= 0) return static_cast<std::uint64_t>(i);
  throw FormatError(strcat("metadata '", key, "': expected a non-negative integer, found ", type_name(type), " ", to_string()));
}

std::int64_t Value::as_int(std::string_view key) const {
  if (is_signed(type)) return i;
  if (is_integer() && u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return static_cast<std::int64_t>(u);
  throw FormatError(strcat("metadata '", key, "': expected an integer, found ", type_name(type), " ", to_string()));
}

double Value::as_float(std::string_view key) const {
  if (type == ValueType::F32 || type == ValueType::F64) return f;
  if (is_signed(type)) return static_cast<double>(i);
  if (is_integer()) return static_cast<double>(u);
  throw FormatError(strcat("metadata '", key, "': expected a number, found ", type_name(type)));
}

const std::string& Value::as_string(std::string_view key) const {
  if (type == ValueType::String) return s;
  throw FormatError(strcat("metadata '", key, "': expected a string, found ", type_name(type)));
}

std::string Value::to_string(std::size_t max_items) const {
  switch (type) {
    case ValueType::String: return strcat('"', s.size() > 60 ? s.substr(0, 60) + "..." : s, '"');
    case ValueType::Bool: return u ? "true" : "false";
    case ValueType::F32: case ValueType::F64: return strcat(f);
    case ValueType::Array: {
      std::string r = strcat("[", type_name(elem), " x ", array.size(), ": ");
      for (std::size_t k = 0; k < array.size() && k < max_items; ++k) r += (k ? ", " : "") + array[k].to_string(max_items);
      return r + (array.size() > max_items ? ", ...]" : "]");
    }
    default: return is_signed(type) ? strcat(i) : strcat(u);
  }
}

}  // namespace realizar::gguf
