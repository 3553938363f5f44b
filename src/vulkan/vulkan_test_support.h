// Helpers of the Vulkan shader tests (vulkan_test.cpp): the printed seed, the contracts of
// contracts/gpu/vulkan.yaml, buffer round trips, and the visible skip without a device.
#pragma once
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "contract/contract_spec.h"
#include "support/gpu_contract.h"
#include "trueno/quant.h"
#include "trueno/vulkan/context.h"

namespace trueno::vulkan::testing {

inline std::uint64_t test_seed() { return test::gpu_test_seed("vulkan"); }

// The device the tests use: TRUENO_VULKAN_TEST_DEVICE, else 0 (a CPU device such as lavapipe is used
// like any other: tests force it).
inline int test_device() {
  const char* e = std::getenv("TRUENO_VULKAN_TEST_DEVICE");
  return e != nullptr && *e != '\0' ? std::atoi(e) : 0;
}

inline YAML::Node gpu_contract(const std::string& op) { return test::gpu_contract_of("vulkan", op); }

// Every VulkanGpu test starts with this: a visible skip without a device.
#define TRUENO_REQUIRE_VULKAN_DEVICE()                                                              \
  do {                                                                                              \
    std::string why_;                                                                               \
    if (!probe(::trueno::vulkan::testing::test_device(), &why_)) GTEST_SKIP() << "skipped: no Vulkan device: " << why_; \
  } while (0)

// The tests' context, opened on first use and kept for the test process (the library keeps none).
inline Context& test_context() {
  static const std::shared_ptr<Context> c = [] {
    auto ctx = Context::open(test_device());
    std::printf("[vulkan] %s\n", ctx->info().describe().c_str());
    return ctx;
  }();
  return *c;
}

inline std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  return test::random_normal(n, rng, scale);
}

// Checks gpu against cpu by the op's obligation (tests/support/gpu_contract.h).
inline void expect_contract(const std::string& op, const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what) {
  test::expect_gpu_contract("vulkan", op, gpu, cpu, what);
}

inline Buffer to_device(const void* p, std::size_t bytes, Context& c = test_context()) {
  Buffer b(c, bytes);
  b.upload(p, bytes);
  return b;
}
template <class T>
inline Buffer to_device(const std::vector<T>& v, Context& c = test_context()) { return to_device(v.data(), v.size() * sizeof(T), c); }
template <class T = float>
inline std::vector<T> from_device(const Buffer& b, std::size_t n) {
  std::vector<T> v(n);
  b.download(v.data(), n * sizeof(T));
  return v;
}

// rows x cols weights wf in the GGUF layout of `type`.
inline std::vector<std::byte> quantized(QuantType type, const std::vector<float>& wf, std::size_t rows, std::size_t cols) {
  const std::size_t rb = quant_row_bytes(type, cols);
  std::vector<std::byte> w(rows * rb);
  for (std::size_t r = 0; r < rows; ++r) quantize(type, std::span(wf).subspan(r * cols, cols), std::span(w).subspan(r * rb, rb));
  return w;
}

}  // namespace trueno::vulkan::testing
