// realizar_damage_gguf IN OUT TENSOR INDEX: writes IN with element INDEX of the F32 tensor TENSOR set to
// NaN (the CLI tests' damaged model, made in the build folder at test time).
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "support/gguf_damage.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: realizar_damage_gguf IN OUT TENSOR INDEX\n");
    return 2;
  }
  try {
    const auto bytes = realizar::test::damaged_gguf(argv[1], argv[3], std::stoul(argv[4]), std::numeric_limits<float>::quiet_NaN());
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error(std::string(argv[2]) + ": write failed");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "realizar_damage_gguf: %s\n", e.what());
    return 1;
  }
  return 0;
}
