// Reduction scalar references: sequential loops. NaN rule for max/min/argmax/argmin: the first NaN
// wins (its value or its index); ties: the first index.
#include <cmath>

#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::scalar::kernels {
namespace {
float neumaier_sum(const float* x, std::size_t n) {
  float s = 0.0f, c = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float t = s + x[i];
    c += std::fabs(s) >= std::fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
    s = t;
  }
  return std::isfinite(s) ? s + c : s;  // non-finite s makes c NaN: s is the answer
}
template <bool is_max>
std::size_t arg_extreme(const float* x, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return i;
    if (is_max ? x[i] > x[best] : x[i] < x[best]) best = i;
  }
  return best;
}
}  // namespace

float sum(const float* x, std::size_t n) { return neumaier_sum(x, n); }
float dot(const float* x, const float* y, std::size_t n) {
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}
float max(const float* x, std::size_t n) { return x[arg_extreme<true>(x, n)]; }
float min(const float* x, std::size_t n) { return x[arg_extreme<false>(x, n)]; }
std::size_t argmax(const float* x, std::size_t n) { return arg_extreme<true>(x, n); }
std::size_t argmin(const float* x, std::size_t n) { return arg_extreme<false>(x, n); }
float norm_l2(const float* x, std::size_t n) { return std::sqrt(dot(x, x, n)); }
float mean(const float* x, std::size_t n) { return neumaier_sum(x, n) / static_cast<float>(n); }
float variance(const float* x, std::size_t n) {
  const float m = mean(x, n);
  float s = 0.0f;
  for (std::size_t i = 0; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  return s / static_cast<float>(n);
}

}  // namespace trueno::cpu::scalar::kernels
