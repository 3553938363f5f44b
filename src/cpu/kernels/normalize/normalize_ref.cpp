// Row-wise normalization scalar references, in the order the paper formulas read.
#include <cmath>

#include "cpu/simd/vec_scalar.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/math_impl.h"

namespace trueno::cpu::scalar::kernels {
namespace {
float ex(float v) { return vexp({v}).r; }
float row_max(const float* x, std::size_t n) { return max(x, n); }
}  // namespace

void softmax(const float* x, float* out, std::size_t n) {
  if (n == 0) return;
  const float m = row_max(x, n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = ex(x[i] - m);
    sum += out[i];
  }
  const float inv = 1.0f / sum;
  for (std::size_t i = 0; i < n; ++i) out[i] *= inv;
}

void log_softmax(const float* x, float* out, std::size_t n) {
  if (n == 0) return;
  const float m = row_max(x, n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += ex(x[i] - m);
  const float l = std::log(sum);
  for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] - m) - l;
}

void rmsnorm(const float* x, const float* w, float eps, float* out, std::size_t n) {
  if (n == 0) return;
  const float ms = dot(x, x, n) / static_cast<float>(n);
  const float r = 1.0f / std::sqrt(ms + eps);
  for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] * r) * w[i];
}

void layernorm(const float* x, const float* w, const float* b, float eps, float* out, std::size_t n) {
  if (n == 0) return;
  const float m = mean(x, n);
  const float r = 1.0f / std::sqrt(variance(x, n) + eps);
  for (std::size_t i = 0; i < n; ++i) out[i] = ((x[i] - m) * r) * w[i] + b[i];
}

}  // namespace trueno::cpu::scalar::kernels
