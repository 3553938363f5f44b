// Helpers of the CUDA kernel tests (cuda_test.cpp, prefill_test.cpp): the printed seed, the contracts of
// contracts/gpu/cuda.yaml, device round trips, and the visible skip without a device.
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
#include "trueno/cuda/context.h"
#include "trueno/quant.h"

namespace trueno::cuda::testing {

inline std::uint64_t test_seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("[cuda] seed %llu (rerun with TRUENO_TEST_SEED=%llu)\n", static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

inline YAML::Node gpu_contract(const std::string& op) {
  const YAML::Node root = YAML::LoadFile(test::contracts_dir() + "/gpu/cuda.yaml");
  const YAML::Node node = root["ops"][op];
  if (!node) ADD_FAILURE() << "contracts/gpu/cuda.yaml has no contract for CUDA op '" << op << "'";
  return node;
}

// Every CudaGpu test starts with this: a visible skip without a device.
#define TRUENO_REQUIRE_CUDA_DEVICE()                              \
  do {                                                            \
    std::string why_;                                             \
    if (!probe(0, &why_)) GTEST_SKIP() << "skipped: no CUDA device: " << why_; \
  } while (0)

// The tests' context on device 0, opened on first use and kept for the test process (the library itself
// keeps none: each user opens its own).
inline Context& test_context() {
  static const std::shared_ptr<Context> c = Context::open(0);
  return *c;
}

// Every weight type the CUDA GEMV and conversion kernels take.
constexpr QuantType kWeightTypes[] = {QuantType::Q4_K, QuantType::Q5_K, QuantType::Q6_K, QuantType::Q8_0,
                                      QuantType::Q4_0, QuantType::F32,  QuantType::F16,  QuantType::BF16};

inline std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Checks gpu against cpu by the op's gpu_vs_cpu or gpu_vs_cpu_exact obligation; prints the measures.
// obligation: the index in the op's list (an op may bound its output against two references).
inline void expect_contract(const std::string& op, const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what,
                            int obligation = 0) {
  const YAML::Node ob = gpu_contract(op)["obligations"][obligation];
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

inline DeviceBuffer to_device(const void* p, std::size_t bytes) {
  DeviceBuffer b(test_context(), bytes);
  b.upload(p, bytes);
  return b;
}
template <class T>
inline DeviceBuffer to_device(const std::vector<T>& v) { return to_device(v.data(), v.size() * sizeof(T)); }
inline std::vector<float> from_device(const DeviceBuffer& b, std::size_t n) {
  test_context().synchronize();
  std::vector<float> v(n);
  b.download(v.data(), n * 4);
  return v;
}

}  // namespace trueno::cuda::testing
