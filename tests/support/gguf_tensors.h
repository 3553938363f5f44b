// Test support: the tensor directory of a GGUF file (names, types, shapes, data), enough to check
// the quantized formats against real files. Bounds-checked; throws std::runtime_error naming the
// field and offset. (realizar's full reader, with metadata, comes with the inference issue.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace trueno::test {

struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> ne;  // ne[0] innermost
  std::uint32_t type = 0;
  std::span<const std::byte> data;
  std::uint64_t elements() const;
};

class GgufTensors {
 public:
  explicit GgufTensors(const std::string& path);
  const GgufTensor& at(const std::string& name) const;
  const std::map<std::string, GgufTensor>& all() const { return tensors_; }

 private:
  std::vector<std::byte> bytes_;
  std::map<std::string, GgufTensor> tensors_;
};

// tests/data of the source tree (compile definition TRUENO_TESTDATA_DIR; the environment variable of the
// same name overrides it).
std::string testdata_dir();

}  // namespace trueno::test
