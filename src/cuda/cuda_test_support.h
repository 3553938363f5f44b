// Helpers of the CUDA kernel tests (cuda_test.cpp, prefill_test.cpp): the printed seed, the contracts of
// contracts/gpu/cuda.yaml, device round trips, and the visible skip without a device.
#pragma once
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "contract/contract_spec.h"
#include "support/gpu_contract.h"
#include "trueno/cuda/context.h"
#include "trueno/ops.h"
#include "trueno/quant.h"

namespace trueno::cuda::testing {

inline std::uint64_t test_seed() { return test::gpu_test_seed("cuda"); }

inline YAML::Node gpu_contract(const std::string& op) { return test::gpu_contract_of("cuda", op); }

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
  return test::random_normal(n, rng, scale);
}

// The CPU forward pass's attention for one token, restated (q and the softmax weights rounded to f16, sums
// in double): q [n_head][hd] over positions [0, n) of k, v [n][n_kv * hd]; head h reads KV head h / group.
inline std::vector<float> attention_reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                              int n_head, int n_kv, int hd, int n) {
  const int kv_row = n_kv * hd, group = n_head / n_kv;
  std::vector<float> want(q.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int h = 0; h < n_head; ++h) {
    const int kvh = h / group;
    std::vector<float> qh(hd), s(n);
    std::vector<std::uint16_t> t(std::max(hd, n));
    ops::f32_to_f16(std::span(q).subspan(h * hd, hd), std::span(t).first(hd));
    ops::f16_to_f32(std::span(t).first(hd), qh);
    for (int j = 0; j < n; ++j) {
      double dot = 0;
      for (int d = 0; d < hd; ++d) dot += double{k[static_cast<std::size_t>(j) * kv_row + kvh * hd + d]} * qh[d];
      s[j] = static_cast<float>(dot) * scale;
    }
    ops::softmax(s, s);
    ops::f32_to_f16(s, std::span(t).first(n));
    ops::f16_to_f32(std::span(t).first(n), s);
    for (int d = 0; d < hd; ++d) {
      double acc = 0;
      for (int j = 0; j < n; ++j) acc += double{s[j]} * v[static_cast<std::size_t>(j) * kv_row + kvh * hd + d];
      want[h * hd + d] = static_cast<float>(acc);
    }
  }
  return want;
}

// Checks gpu against cpu by the op's obligation (tests/support/gpu_contract.h).
inline void expect_contract(const std::string& op, const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what,
                            int obligation = 0) {
  test::expect_gpu_contract("cuda", op, gpu, cpu, what, obligation);
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
