// GGUF files (v2, v3): a validated, memory-mapped reader and a writer. Every count, length, type id,
// shape, offset and size is checked against the file before use; a malformed file raises
// realizar::FormatError naming the field and its byte offset (no crash, hang or huge allocation).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trueno/error.h"
#include "trueno/quant.h"

namespace realizar {

// A file that is not what it claims to be (bad magic, out-of-range offset, unknown type, ...).
class FormatError : public trueno::Error {
 public:
  using trueno::Error::Error;
};

namespace gguf {

enum class ValueType : std::uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9,
  U64 = 10, I64 = 11, F64 = 12,
};
std::string_view type_name(ValueType t);

// One metadata value; arrays may nest.
struct Value {
  ValueType type = ValueType::U32;
  std::uint64_t u = 0;  // unsigned integers and bool
  std::int64_t i = 0;   // signed integers
  double f = 0;         // floats
  std::string s;
  ValueType elem = ValueType::U8;  // arrays: element type
  std::vector<Value> array;

  bool is_integer() const;
  // Conversions that throw FormatError (naming `key`) when the value does not fit.
  std::uint64_t as_uint(std::string_view key) const;
  std::int64_t as_int(std::string_view key) const;
  double as_float(std::string_view key) const;
  const std::string& as_string(std::string_view key) const;
  std::string to_string(std::size_t max_items = 8) const;  // for `info`
};

struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> ne;  // ne[0] innermost (a row), up to 4 dims
  trueno::QuantType type = trueno::QuantType::F32;
  std::uint64_t offset = 0;       // from the start of the data section
  std::uint64_t bytes = 0;
  std::span<const std::byte> data;  // inside the mapping
  std::uint64_t elements() const;
  std::uint64_t rows() const { return ne.empty() ? 0 : elements() / ne[0]; }
};

class File {
 public:
  // Maps and validates path. Throws FormatError (malformed) or trueno::InvalidArgument (cannot open).
  // The first part of a split model (NAME-00001-of-0000N.gguf) opens the other parts beside it: Note
  // [Split GGUF files] (gguf_reader.cpp).
  static File open(const std::string& path);
  // Validates an in-memory image (used by tests and the fuzzer); the bytes must outlive the File.
  static File parse(std::span<const std::byte> bytes, std::string name = "<memory>");

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }
  std::uint64_t file_size() const;  // every part's, for a split model
  std::size_t split_parts() const { return 1 + parts_.size(); }
  const std::string& path() const { return name_; }

  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;
  const Value& at(std::string_view key) const;  // FormatError "missing metadata key" when absent
  std::uint64_t get_uint(std::string_view key, std::optional<std::uint64_t> fallback = {}) const;
  double get_float(std::string_view key, std::optional<double> fallback = {}) const;
  std::string get_string(std::string_view key, std::optional<std::string> fallback = {}) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;

 private:
  File() = default;
  struct Mapping;
  std::unique_ptr<Mapping> map_;
  std::span<const std::byte> bytes_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32, data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, std::size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
  std::vector<File> parts_;  // a split model's parts 2..N: their mappings hold their tensors' data
  static File open_one(const std::string& path);
  void parse_all();
  void open_split_parts();
};

// Writes a GGUF v3 file: metadata in order, then tensor infos, then the data, each tensor aligned.
class Writer {
 public:
  void set(std::string key, Value v);
  void set_u32(std::string key, std::uint32_t v);
  void set_f32(std::string key, float v);
  void set_string(std::string key, std::string v);
  void set_string_array(std::string key, const std::vector<std::string>& v);
  void set_f32_array(std::string key, const std::vector<float>& v);
  void set_i32_array(std::string key, const std::vector<std::int32_t>& v);
  // data must hold exactly the bytes of ne elements of type (copied).
  void add_tensor(std::string name, std::vector<std::uint64_t> ne, trueno::QuantType type, std::vector<std::byte> data);
  // A tensor whose bytes are produced by fill(out) only while write() streams the file (multi-GB models
  // never sit in memory whole).
  using Fill = std::function<void(std::span<std::byte> out)>;
  void add_tensor(std::string name, std::vector<std::uint64_t> ne, trueno::QuantType type, Fill fill);
  std::vector<std::byte> bytes() const;
  // progress(done_bytes, total_bytes) after each tensor.
  void write(const std::string& path, const std::function<void(std::uint64_t, std::uint64_t)>& progress = {}) const;
  std::uint64_t file_size() const;

 private:
  std::vector<std::pair<std::string, Value>> kv_;
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> ne;
    trueno::QuantType type;
    std::uint64_t bytes;
    std::vector<std::byte> data;  // or
    Fill fill;
  };
  std::vector<std::byte> header() const;  // everything before the data section, padded
  std::vector<Tensor> tensors_;
  std::uint64_t alignment() const;
};

}  // namespace gguf
}  // namespace realizar
