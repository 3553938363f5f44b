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
#include "trueno/vulkan/context.h"

namespace trueno::vulkan::testing {

inline std::uint64_t test_seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("[vulkan] seed %llu (rerun with TRUENO_TEST_SEED=%llu)\n", static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

// The device the tests use: TRUENO_VULKAN_TEST_DEVICE, else 0 (a CPU device such as lavapipe is used
// like any other: tests force it).
inline int test_device() {
  const char* e = std::getenv("TRUENO_VULKAN_TEST_DEVICE");
  return e != nullptr && *e != '\0' ? std::atoi(e) : 0;
}

inline YAML::Node gpu_contract(const std::string& op) {
  const YAML::Node root = YAML::LoadFile(test::contracts_dir() + "/gpu/vulkan.yaml");
  const YAML::Node node = root["ops"][op];
  if (!node) ADD_FAILURE() << "contracts/gpu/vulkan.yaml has no contract for Vulkan op '" << op << "'";
  return node;
}

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
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Checks gpu against cpu by the op's gpu_vs_cpu or gpu_vs_cpu_exact obligation; prints the measures.
inline void expect_contract(const std::string& op, const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what) {
  const YAML::Node ob = gpu_contract(op)["obligations"][0];
  ASSERT_EQ(gpu.size(), cpu.size());
  if (ob["type"].as<std::string>() == "gpu_vs_cpu_exact") {
    std::size_t diff = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i) diff += std::memcmp(&gpu[i], &cpu[i], 4) != 0;
    std::printf("%s %s: %zu of %zu differ\n", op.c_str(), what.c_str(), diff, gpu.size());
    EXPECT_EQ(diff, 0u) << op << " " << what;
    return;
  }
  double dot = 0, na = 0, nb = 0, err = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    dot += double{gpu[i]} * cpu[i], na += double{gpu[i]} * gpu[i], nb += double{cpu[i]} * cpu[i];
    err += (double{gpu[i]} - cpu[i]) * (double{gpu[i]} - cpu[i]);
  }
  const double cosine = na == 0 && nb == 0 ? 1.0 : dot / std::sqrt(na * nb), nmse = nb == 0 ? err : err / nb;
  std::printf("%s %s: cosine %.9f, nmse %.3e\n", op.c_str(), what.c_str(), cosine, nmse);
  EXPECT_GE(cosine, ob["min_cosine"].as<double>()) << op << " " << what;
  EXPECT_LE(nmse, ob["max_nmse"].as<double>()) << op << " " << what;
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

}  // namespace trueno::vulkan::testing
