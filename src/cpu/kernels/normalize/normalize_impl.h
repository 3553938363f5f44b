// Row-wise normalizations (softmax, log_softmax, rmsnorm, layernorm), written once over the vector
// API and compiled per ISA. They reuse the reduction helpers of the same ISA.
#pragma once
#include <cstddef>

#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/math_impl.h"
#include "cpu/kernels/reduce/reduce_helpers.h"

namespace trueno::cpu::TRUENO_ISA {

// out[i] = exp(x[i] - m); returns the sum of out (padding lanes contribute exp(-inf) = 0).
inline float exp_shifted_sum(const float* x, float m, float* out, std::size_t n) {
  const Vec mv = set1(m);
  Vec s0 = zero(), s1 = zero();
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W) {
    const Vec e = vexp(sub(load(x + i), mv));
    store(out + i, e);
    s0 = add(s0, e);
  }
  if (i < n) {
    const Vec e = vexp(sub(load_pad(x + i, n - i, -__builtin_inff()), mv));
    store_tail(out + i, e, n - i);
    s1 = add(s1, e);
  }
  return hsum(add(s0, s1));
}

inline float row_max(const float* x, std::size_t n) {
  std::size_t nan_at;
  const float m = extreme<true>(x, n, &nan_at);
  return nan_at < n ? x[nan_at] : m;
}

namespace kernels {

void softmax(const float* x, float* out, std::size_t n) {
  if (n == 0) return;
  const float sum = exp_shifted_sum(x, row_max(x, n), out, n);
  const Vec inv = set1(1.0f / sum);
  map1(out, out, n, [inv](Vec v) { return TRUENO_ISA::mul(v, inv); });
}

void log_softmax(const float* x, float* out, std::size_t n) {
  if (n == 0) return;
  const float m = row_max(x, n);
  // exp values go to out first (it may alias x: read x before overwriting it below).
  float sum = 0.0f;
  {
    const Vec mv = set1(m);
    Vec s0 = zero();
    std::size_t i = 0;
    for (; i + Vec::W <= n; i += Vec::W) s0 = add(s0, vexp(sub(load(x + i), mv)));
    if (i < n) s0 = add(s0, vexp(sub(load_pad(x + i, n - i, -__builtin_inff()), mv)));
    sum = hsum(s0);
  }
  const Vec mv = set1(m), lv = set1(__builtin_logf(sum));
  map1(x, out, n, [mv, lv](Vec v) { return TRUENO_ISA::sub(TRUENO_ISA::sub(v, mv), lv); });
}

void rmsnorm(const float* x, const float* w, float eps, float* out, std::size_t n) {
  if (n == 0) return;
  const float ms = dot4(x, x, n) / static_cast<float>(n);
  const Vec r = set1(1.0f / __builtin_sqrtf(ms + eps));
  map2(x, w, out, n, [r](Vec v, Vec wv) { return TRUENO_ISA::mul(TRUENO_ISA::mul(v, r), wv); });
}

void layernorm(const float* x, const float* w, const float* b, float eps, float* out, std::size_t n) {
  if (n == 0) return;
  const float m = compensated_sum(x, n) / static_cast<float>(n);
  const float var = sum_sq_dev(x, n, m) / static_cast<float>(n);
  const Vec mv = set1(m), r = set1(1.0f / __builtin_sqrtf(var + eps));
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W)
    store(out + i, fmadd(TRUENO_ISA::mul(TRUENO_ISA::sub(load(x + i), mv), r), load(w + i), load(b + i)));
  if (i < n) {
    const std::size_t t = n - i;
    const Vec y = fmadd(TRUENO_ISA::mul(TRUENO_ISA::sub(load_tail(x + i, t), mv), r), load_tail(w + i, t),
                        load_tail(b + i, t));
    store_tail(out + i, y, t);
  }
}

}  // namespace kernels
}  // namespace trueno::cpu::TRUENO_ISA
