// What decy's Vulkan tests share (decy_vulkan_test, decy_harvest_test, decy_warp32_test): the device, the
// SPIR-V that decy + glslc made at build time, buffers of floats, and the printed seed.
#pragma once
#ifdef TRUENO_TESTS_WITH_VULKAN
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "trueno/vulkan/context.h"

namespace decy::test {

using trueno::vulkan::Buffer;
using trueno::vulkan::Context;
using trueno::vulkan::Pipeline;
using trueno::vulkan::Recorder;

#define DECY_REQUIRE_VULKAN_DEVICE()                                                              \
  do {                                                                                            \
    std::string why_;                                                                             \
    if (!trueno::vulkan::probe(0, &why_)) GTEST_SKIP() << "skipped: no Vulkan device: " << why_; \
  } while (0)

inline Context& context() {
  static const std::shared_ptr<Context> c = [] {
    auto ctx = Context::open(0);
    std::printf("[decy] %s\n", ctx->info().describe().c_str());
    return ctx;
  }();
  return *c;
}

// The SPIR-V decy + glslc made of kernel `name` at build time (DECY_SPIRV_DIR moves the folder: a copy
// of the build on another machine).
inline std::vector<std::uint32_t> spirv(const std::string& name) {
  const char* env = std::getenv("DECY_SPIRV_DIR");
  std::ifstream f(std::string(env != nullptr && *env != '\0' ? env : DECY_SPIRV_DIR) + "/" + name + ".spv", std::ios::binary);
  EXPECT_TRUE(f.good()) << "no SPIR-V for " << name << " in " << DECY_SPIRV_DIR;
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

inline Buffer upload(const std::vector<float>& v) {
  Buffer b(context(), v.size() * 4);
  b.upload(v.data(), v.size() * 4);
  return b;
}

inline std::vector<float> download(const Buffer& b, std::size_t n) {
  std::vector<float> v(n);
  b.download(v.data(), n * 4);
  return v;
}

// The --warp32 SPIR-V of src/cuda/kernels/<file>.cu's kernel (decy/CMakeLists.txt), 256 threads per block.
inline const Pipeline& warp32_pipeline(const std::string& name, std::uint32_t buffers, std::uint32_t push_bytes) {
  const std::string spv = name + "_warp32";
  static const std::uint32_t spec[1] = {256};
  return context().pipeline_from_spirv(spv, spirv(spv), buffers, push_bytes, spec);
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 r(trueno::test::gpu_test_seed("decy"));
  return r;
}

}  // namespace decy::test
#endif  // TRUENO_TESTS_WITH_VULKAN
