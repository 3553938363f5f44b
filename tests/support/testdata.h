// Test support for realizar: where tests/data is, and a fresh random seed (or TRUENO_TEST_SEED).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "support/gguf_tensors.h"

namespace realizar::test {

inline std::string testdata_dir() { return trueno::test::testdata_dir(); }

inline std::uint64_t seed() {
  if (const char* env = std::getenv("TRUENO_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return (static_cast<std::uint64_t>(std::random_device{}()) << 32) | std::random_device{}();
}

}  // namespace realizar::test
