// Minimal, bounds-checked GGUF tensor-directory parsing for tests.
#include "support/gguf_tensors.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "trueno/quant.h"

namespace trueno::test {
namespace {

class Cursor {
 public:
  Cursor(const std::vector<std::byte>& b, const std::string& path) : b_(b), path_(path) {}
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str(const char* what) {
    const auto n = get<std::uint64_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  void skip_value(std::uint32_t type, int depth = 0) {
    static const int kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type > 12) fail("value type");
    if (type == 8) {
      str("string value");
    } else if (type == 9) {
      if (depth > 8) fail("array nesting");
      const auto et = get<std::uint32_t>("array type");
      const auto n = get<std::uint64_t>("array count");
      if (n > b_.size()) fail("array count");
      for (std::uint64_t i = 0; i < n; ++i) skip_value(et, depth + 1);
    } else {
      need(kSize[type], "value");
      pos_ += kSize[type];
    }
  }
  std::size_t pos() const { return pos_; }
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(path_ + ": malformed GGUF " + what + " at offset " + std::to_string(pos_));
  }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > b_.size() - pos_) fail(what);
  }
  const std::vector<std::byte>& b_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

}  // namespace

std::uint64_t GgufTensor::elements() const {
  std::uint64_t n = 1;
  for (auto d : ne) n *= d;
  return n;
}

GgufTensors::GgufTensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  f.seekg(0, std::ios::end);
  bytes_.resize(static_cast<std::size_t>(f.tellg()));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
  Cursor c(bytes_, path);
  if (c.get<std::uint32_t>("magic") != 0x46554747u) c.fail("magic");
  const auto version = c.get<std::uint32_t>("version");
  if (version != 2 && version != 3) c.fail("version");
  const auto n_tensors = c.get<std::uint64_t>("tensor count");
  const auto n_kv = c.get<std::uint64_t>("kv count");
  std::uint64_t alignment = 32;
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    const std::string key = c.str("key");
    const auto type = c.get<std::uint32_t>("value type");
    if (key == "general.alignment" && type == 4) {
      alignment = c.get<std::uint32_t>("alignment");
      if (alignment == 0 || (alignment & (alignment - 1))) c.fail("alignment");
    } else {
      c.skip_value(type);
    }
  }
  std::vector<std::pair<GgufTensor, std::uint64_t>> infos;
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    t.name = c.str("tensor name");
    const auto dims = c.get<std::uint32_t>("n_dims");
    if (dims < 1 || dims > 4) c.fail("n_dims");
    for (std::uint32_t d = 0; d < dims; ++d) t.ne.push_back(c.get<std::uint64_t>("ne"));
    t.type = c.get<std::uint32_t>("tensor type");
    infos.emplace_back(t, c.get<std::uint64_t>("tensor offset"));
  }
  const std::uint64_t data_start = (c.pos() + alignment - 1) / alignment * alignment;
  for (auto& [t, offset] : infos) {
    const auto qt = quant_type_from_id(t.type);
    const std::uint64_t rows = t.elements() / t.ne[0];
    const std::uint64_t size = quant_row_bytes(qt, t.ne[0]) * rows;
    if (data_start + offset > bytes_.size() || size > bytes_.size() - data_start - offset)
      throw std::runtime_error(path + ": tensor " + t.name + " extends past the end of the file");
    t.data = std::span<const std::byte>(bytes_.data() + data_start + offset, size);
    tensors_[t.name] = t;
  }
}

const GgufTensor& GgufTensors::at(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error("no tensor " + name);
  return it->second;
}

std::string testdata_dir() {
  if (const char* env = std::getenv("TRUENO_TESTDATA_DIR")) return env;
  return TRUENO_TESTDATA_DIR;
}

}  // namespace trueno::test
