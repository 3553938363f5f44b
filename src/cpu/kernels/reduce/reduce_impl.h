// Reductions, written once over the vector API and compiled per ISA (reduce_<isa>.cpp).
// Tails are zero-padded (neutral for sums) or padded with a lane of the data (neutral for max/min).
#pragma once
#include <cstddef>

#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/reduce/reduce_helpers.h"

namespace trueno::cpu::TRUENO_ISA {

namespace kernels {

float sum(const float* x, std::size_t n) { return compensated_sum(x, n); }
float dot(const float* x, const float* y, std::size_t n) { return dot4(x, y, n); }
float max(const float* x, std::size_t n) {
  std::size_t nan_at;
  const float m = extreme<true>(x, n, &nan_at);
  return nan_at < n ? x[nan_at] : m;
}
float min(const float* x, std::size_t n) {
  std::size_t nan_at;
  const float m = extreme<false>(x, n, &nan_at);
  return nan_at < n ? x[nan_at] : m;
}
std::size_t argmax(const float* x, std::size_t n) {
  std::size_t nan_at;
  const float m = extreme<true>(x, n, &nan_at);
  return nan_at < n ? nan_at : first_equal(x, n, m);
}
std::size_t argmin(const float* x, std::size_t n) {
  std::size_t nan_at;
  const float m = extreme<false>(x, n, &nan_at);
  return nan_at < n ? nan_at : first_equal(x, n, m);
}
float norm_l2(const float* x, std::size_t n) { return __builtin_sqrtf(dot4(x, x, n)); }
float mean(const float* x, std::size_t n) { return compensated_sum(x, n) / static_cast<float>(n); }
float variance(const float* x, std::size_t n) {
  const float m = compensated_sum(x, n) / static_cast<float>(n);
  return sum_sq_dev(x, n, m) / static_cast<float>(n);
}

}  // namespace kernels
}  // namespace trueno::cpu::TRUENO_ISA
