// GGUF reader: maps the file and validates the header, metadata and tensor directory before anything
// else touches them. Limits: a value's size is checked against the bytes left before it is allocated
// (so a count of 2^60 fails at once), arrays nest at most kMaxDepth deep, integer products are
// overflow-checked, every tensor lies inside the file and after the directory, aligned.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gguf/mapped_files.h"
#include "realizar/gguf.h"
#include "util/strcat.h"

namespace realizar::gguf {
namespace {

constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr int kMaxDepth = 8;
constexpr std::uint64_t kMaxDims = 4;

std::size_t fixed_size(ValueType t) {
  switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: return 8;  // at least its length field
    case ValueType::Array: return 12;  // at least type + count
  }
  return 0;
}

// A bounds-checked little-endian cursor over the file; every failure names the field and offset.
class Cursor {
 public:
  Cursor(std::span<const std::byte> b, const std::string& file) : b_(b), file_(file) {}
  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return b_.size() - pos_; }

  [[noreturn]] void fail(const std::string& field, const std::string& what, std::uint64_t at) const {
    throw FormatError(strcat(file_, ": ", field, " at offset ", at, ": ", what));
  }
  template <class T>
  T read(const std::string& field) {
    if (left() < sizeof(T)) fail(field, strcat("needs ", sizeof(T), " bytes, the file ends after ", left()), pos_);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string string(const std::string& field) {
    const std::uint64_t at = pos_;
    const auto n = read<std::uint64_t>(field + " (length)");
    if (n > left()) fail(field, strcat("string of ", n, " bytes but only ", left(), " left in the file"), at);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const std::byte> b_;
  const std::string& file_;
  std::uint64_t pos_ = 0;
};

ValueType value_type(Cursor& c, const std::string& field) {
  const std::uint64_t at = c.pos();
  const auto t = c.read<std::uint32_t>(field);
  if (t > static_cast<std::uint32_t>(ValueType::F64)) c.fail(field, strcat("unknown value type id ", t, " (valid: 0-12)"), at);
  return static_cast<ValueType>(t);
}

Value read_value(Cursor& c, ValueType t, const std::string& field, int depth) {
  Value v;
  v.type = t;
  switch (t) {
    case ValueType::U8: v.u = c.read<std::uint8_t>(field); break;
    case ValueType::I8: v.i = c.read<std::int8_t>(field); break;
    case ValueType::U16: v.u = c.read<std::uint16_t>(field); break;
    case ValueType::I16: v.i = c.read<std::int16_t>(field); break;
    case ValueType::U32: v.u = c.read<std::uint32_t>(field); break;
    case ValueType::I32: v.i = c.read<std::int32_t>(field); break;
    case ValueType::U64: v.u = c.read<std::uint64_t>(field); break;
    case ValueType::I64: v.i = c.read<std::int64_t>(field); break;
    case ValueType::F32: v.f = c.read<float>(field); break;
    case ValueType::F64: v.f = c.read<double>(field); break;
    case ValueType::Bool: {
      const std::uint64_t at = c.pos();
      v.u = c.read<std::uint8_t>(field);
      if (v.u > 1) c.fail(field, strcat("bool must be 0 or 1, is ", v.u), at);
      break;
    }
    case ValueType::String: v.s = c.string(field); break;
    case ValueType::Array: {
      const std::uint64_t at = c.pos();
      if (depth >= kMaxDepth) c.fail(field, strcat("arrays nested deeper than ", kMaxDepth), at);
      v.elem = value_type(c, field + " (array element type)");
      const auto n = c.read<std::uint64_t>(field + " (array count)");
      if (n > c.left() / fixed_size(v.elem))
        c.fail(field, strcat("array of ", n, " ", type_name(v.elem), " cannot fit in the ", c.left(), " bytes left"), at);
      v.array.reserve(n);
      for (std::uint64_t k = 0; k < n; ++k) v.array.push_back(read_value(c, v.elem, field, depth + 1));
      break;
    }
  }
  return v;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, Cursor& c, const std::string& field, std::uint64_t at) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) c.fail(field, "size overflows 64 bits", at);
  return a * b;
}

}  // namespace

struct File::Mapping {
  void* addr = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (addr == nullptr) return;
    unregister_mapping(addr);
    munmap(addr, size);
  }
};

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::string& path) {
  File f = open_one(path);
  f.open_split_parts();
  return f;
}

std::uint64_t File::file_size() const {
  std::uint64_t n = bytes_.size();
  for (const auto& p : parts_) n += p.file_size();
  return n;
}

// Note [Split GGUF files]
// llama.cpp's gguf-split format, which other GGUF tools and the browser page (web/gguf_image.mjs) read
// too: a model in N files NAME-00001-of-0000N.gguf ... NAME-0000N-of-0000N.gguf, each a GGUF file with
// split.no (0-based), split.count and split.tensors.count; part 1 holds every metadata key, each part a
// run of whole tensors in its own data section. Opening part 1 opens the others beside it (same name
// pattern) and lists every part's tensors, each a view into its own part's mapping; opening another
// part, a missing part or parts that disagree is an error naming the file to open or the part.
namespace {
std::string split_suffix(std::uint64_t no, std::uint64_t count) {
  char buf[64];  // two 20-digit numbers at most
  std::snprintf(buf, sizeof buf, "-%05llu-of-%05llu.gguf", static_cast<unsigned long long>(no), static_cast<unsigned long long>(count));
  return buf;
}
}  // namespace

void File::open_split_parts() {
  if (!find("split.count")) return;
  const std::uint64_t count = get_uint("split.count"), no = get_uint("split.no", 0);
  if (count <= 1) return;
  const std::string first = split_suffix(1, count);
  if (no != 0)
    throw FormatError(strcat(name_, ": part ", no + 1, " of a model split in ", count, " files: open its first part (...", first, ")"));
  if (!name_.ends_with(first))
    throw FormatError(strcat(name_, ": split.count says ", count, " parts, but the name does not end in ", first,
                             ", so the other parts cannot be found (llama.cpp gguf-split names)"));
  const std::string prefix = name_.substr(0, name_.size() - first.size());
  for (std::uint64_t i = 1; i < count; ++i) {
    const std::string path = prefix + split_suffix(i + 1, count);
    File part;
    try {
      part = open_one(path);
    } catch (const trueno::InvalidArgument& e) {
      throw trueno::InvalidArgument(strcat(name_, ": split part ", i + 1, " of ", count, " is missing or unreadable: ", e.what()));
    }
    if (part.get_uint("split.no", 0) != i || part.get_uint("split.count", 1) != count)
      throw FormatError(strcat(path, ": split.no ", part.get_uint("split.no", 0), " of split.count ", part.get_uint("split.count", 1),
                               ", want part ", i, " of ", count, " (0-based)"));
    for (auto& t : part.tensors_) {
      if (tensor_index_.count(t.name)) throw FormatError(strcat(path, ": tensor '", t.name, "' is also in an earlier part"));
      tensor_index_.emplace(t.name, tensors_.size());
      tensors_.push_back(t);  // its data stays a view into part's mapping, which parts_ keeps
    }
    parts_.push_back(std::move(part));
  }
  if (const Value* total = find("split.tensors.count"); total && total->as_uint("split.tensors.count") != tensors_.size())
    throw FormatError(strcat(name_, ": split.tensors.count says ", total->as_uint("split.tensors.count"), " tensors, the ", count,
                             " parts hold ", tensors_.size()));
}

File File::open_one(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw trueno::InvalidArgument(strcat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw trueno::InvalidArgument(strcat(path, ": not a regular file"));
  }
  File f;
  f.map_ = std::make_unique<Mapping>();
  f.map_->size = static_cast<std::size_t>(st.st_size);
  if (f.map_->size > 0) {
    void* p = mmap(nullptr, f.map_->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw trueno::InvalidArgument(strcat(path, ": cannot map ", f.map_->size, " bytes: ", std::strerror(errno)));
    }
    f.map_->addr = p;
    register_mapping(p, f.map_->size, path);
  }
  ::close(fd);
  f.bytes_ = {static_cast<const std::byte*>(f.map_->addr), f.map_->size};
  f.name_ = path;
  f.parse_all();
  return f;
}

File File::parse(std::span<const std::byte> bytes, std::string name) {
  File f;
  f.bytes_ = bytes;
  f.name_ = std::move(name);
  f.parse_all();
  return f;
}

void File::parse_all() {
  Cursor c(bytes_, name_);
  const auto magic = c.read<std::uint32_t>("magic");
  if (magic != kMagic) c.fail("magic", strcat("not a GGUF file (magic 0x", std::hex, magic, std::dec, ", want \"GGUF\")"), 0);
  version_ = c.read<std::uint32_t>("version");
  if (version_ != 2 && version_ != 3) c.fail("version", strcat("version ", version_, " is not supported (2 or 3)"), 4);
  const std::uint64_t at_counts = c.pos();
  const auto n_tensors = c.read<std::uint64_t>("tensor count");
  const auto n_kv = c.read<std::uint64_t>("metadata count");
  // Each entry takes at least a few bytes: a count larger than the file is malformed, not a reason to allocate.
  if (n_kv > c.left() / 12) c.fail("metadata count", strcat(n_kv, " entries cannot fit in ", c.left(), " bytes"), at_counts + 8);
  if (n_tensors > c.left() / 24) c.fail("tensor count", strcat(n_tensors, " tensors cannot fit in ", c.left(), " bytes"), at_counts);

  for (std::uint64_t k = 0; k < n_kv; ++k) {
    const std::uint64_t at = c.pos();
    std::string key = c.string(strcat("metadata key #", k));
    if (kv_index_.count(key)) c.fail(strcat("metadata key '", key, "'"), "duplicate key", at);
    const ValueType t = value_type(c, strcat("type of '", key, "'"));
    Value v = read_value(c, t, strcat("value of '", key, "'"), 0);
    kv_index_.emplace(key, kv_.size());
    kv_.emplace_back(std::move(key), std::move(v));
  }
  if (const Value* a = find("general.alignment")) {
    if (!a->is_integer() || a->as_uint("general.alignment") == 0 || (a->as_uint("general.alignment") & (a->as_uint("general.alignment") - 1)) != 0)
      throw FormatError(strcat(name_, ": general.alignment must be a power of two, is ", a->to_string()));
    alignment_ = a->as_uint("general.alignment");
  }

  tensors_.reserve(n_tensors);
  for (std::uint64_t k = 0; k < n_tensors; ++k) {
    const std::uint64_t at = c.pos();
    TensorInfo t;
    t.name = c.string(strcat("tensor #", k, " name"));
    const std::string field = strcat("tensor '", t.name, "'");
    if (tensor_index_.count(t.name)) c.fail(field, "duplicate tensor name", at);
    const std::uint64_t at_dims = c.pos();
    const auto n_dims = c.read<std::uint32_t>(field + " dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) c.fail(field, strcat(n_dims, " dimensions (1-", kMaxDims, " allowed)"), at_dims);
    std::uint64_t elems = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const std::uint64_t at_d = c.pos();
      const auto n = c.read<std::uint64_t>(strcat(field, " ne[", d, "]"));
      if (n == 0 || n > (std::uint64_t{1} << 40)) c.fail(strcat(field, " ne[", d, "]"), strcat("dimension ", n, " out of range"), at_d);
      elems = checked_mul(elems, n, c, field + " element count", at_d);
      t.ne.push_back(n);
    }
    const std::uint64_t at_type = c.pos();
    const auto type_id = c.read<std::uint32_t>(field + " type");
    try {
      t.type = trueno::quant_type_from_id(type_id);
    } catch (const trueno::Error& e) {
      c.fail(field + " type", e.what(), at_type);
    }
    const auto& info = trueno::quant_info(t.type);
    if (t.ne[0] % info.block_elems != 0)
      c.fail(field, strcat("ne[0] = ", t.ne[0], " is not a multiple of the ", info.name, " block size ", info.block_elems), at_dims);
    t.bytes = checked_mul(elems / info.block_elems, info.block_bytes, c, field + " byte size", at_dims);
    const std::uint64_t at_off = c.pos();
    t.offset = c.read<std::uint64_t>(field + " offset");
    if (t.offset % alignment_ != 0) c.fail(field + " offset", strcat(t.offset, " is not a multiple of the alignment ", alignment_), at_off);
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }
  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (data_offset_ > bytes_.size() && !tensors_.empty())
    throw FormatError(strcat(name_, ": data section at offset ", data_offset_, " starts past the end of the file (", bytes_.size(), " bytes)"));
  for (auto& t : tensors_) {
    const std::uint64_t avail = bytes_.size() - std::min<std::uint64_t>(data_offset_, bytes_.size());
    if (t.offset > avail || t.bytes > avail - t.offset)
      throw FormatError(strcat(name_, ": tensor '", t.name, "' (", t.bytes, " bytes at data offset ", t.offset,
                               ") extends past the end of the file (", avail, " data bytes)"));
    t.data = bytes_.subspan(data_offset_ + t.offset, t.bytes);
  }
}

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const Value& File::at(std::string_view key) const {
  if (const Value* v = find(key)) return *v;
  throw FormatError(strcat(name_, ": missing metadata key '", key, "'"));
}

std::uint64_t File::get_uint(std::string_view key, std::optional<std::uint64_t> fallback) const {
  const Value* v = find(key);
  if (v == nullptr && fallback) return *fallback;
  return (v ? *v : at(key)).as_uint(key);
}

double File::get_float(std::string_view key, std::optional<double> fallback) const {
  const Value* v = find(key);
  if (v == nullptr && fallback) return *fallback;
  return (v ? *v : at(key)).as_float(key);
}

std::string File::get_string(std::string_view key, std::optional<std::string> fallback) const {
  const Value* v = find(key);
  if (v == nullptr && fallback) return *fallback;
  return (v ? *v : at(key)).as_string(key);
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::uint64_t TensorInfo::elements() const {
  std::uint64_t n = 1;
  for (auto d : ne) n *= d;  // overflow excluded at parse time
  return n;
}

}  // namespace realizar::gguf
