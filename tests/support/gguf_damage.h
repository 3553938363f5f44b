// Test support: a GGUF file's bytes with one F32 element replaced (a NaN in the weights), to check
// that numbers that go wrong are reported (realizar/recorder.h). Used in memory by realizar_tests and
// on disk by the realizar_damage_gguf tool for the CLI tests.
#pragma once
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "realizar/gguf.h"

namespace realizar::test {

inline std::vector<std::byte> damaged_gguf(const std::string& path, const std::string& tensor, std::size_t index, float value) {
  std::uint64_t at = 0;
  {
    const auto f = gguf::File::open(path);
    const gguf::TensorInfo* t = f.find_tensor(tensor);
    if (t == nullptr) throw std::runtime_error(path + ": no tensor '" + tensor + "'");
    if (t->type != trueno::QuantType::F32 || index >= t->elements())
      throw std::runtime_error(path + ": tensor '" + tensor + "' is not F32 or has no element " + std::to_string(index));
    at = f.data_offset() + t->offset + index * sizeof(float);
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  std::memcpy(bytes.data() + at, &value, sizeof value);
  return bytes;
}

}  // namespace realizar::test
