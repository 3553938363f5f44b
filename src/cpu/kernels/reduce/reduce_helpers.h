// Reduction building blocks over the vector API (compensated sum, dot, extremes), shared by the
// reduce and normalize families. Include after a vec_<isa>.h.
#pragma once
#include <cstddef>

#include "cpu/kernels/vec_util.h"

namespace trueno::cpu::TRUENO_ISA {

// One compensated step on every lane: Knuth's TwoSum gives the exact rounding error of s + x
// without comparing magnitudes (7 vector ops, no blend), accumulated in c (Ogita-Rump-Oishi Sum2,
// the same error bound as Neumaier's variant used by the scalar reference).
inline void two_sum(Vec& s, Vec& c, Vec x) {
  const Vec t = add(s, x);
  const Vec z = sub(t, s);
  c = add(c, add(sub(s, sub(t, z)), sub(x, z)));
  s = t;
}

inline float neumaier_lanes(const float* s, const float* c, std::size_t n) {
  float sum = 0.0f, comp = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const float t = sum + s[i];
    comp += __builtin_fabsf(sum) >= __builtin_fabsf(s[i]) ? (sum - t) + s[i] : (s[i] - t) + sum;
    sum = t;
  }
  for (std::size_t i = 0; i < n; ++i) comp += c[i];
  // Once the running sum is inf or NaN the compensation is NaN: the sum itself is the answer.
  return sum - sum == 0.0f ? sum + comp : sum;
}

// Four independent (sum, compensation) lanes per vector lane hide the add latency; they are merged
// with the same compensated step, then the lanes in a fixed order.
inline float compensated_sum(const float* x, std::size_t n) {
  Vec s0 = zero(), c0 = zero(), s1 = zero(), c1 = zero(), s2 = zero(), c2 = zero(), s3 = zero(), c3 = zero();
  std::size_t i = 0;
  for (; i + 4 * Vec::W <= n; i += 4 * Vec::W) {
    two_sum(s0, c0, load(x + i));
    two_sum(s1, c1, load(x + i + Vec::W));
    two_sum(s2, c2, load(x + i + 2 * Vec::W));
    two_sum(s3, c3, load(x + i + 3 * Vec::W));
  }
  for (; i + Vec::W <= n; i += Vec::W) two_sum(s0, c0, load(x + i));
  if (i < n) two_sum(s1, c1, load_pad(x + i, n - i, 0.0f));
  two_sum(s0, c0, s1), two_sum(s2, c2, s3);
  two_sum(s0, c0, s2);
  c0 = add(add(c0, c1), add(c2, c3));
  float s[Vec::W], c[Vec::W];
  store(s, s0), store(c, c0);
  return neumaier_lanes(s, c, Vec::W);
}

// Sum of x[i]*y[i] over four independent accumulators (hides FMA latency).
inline float dot4(const float* x, const float* y, std::size_t n) {
  Vec a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
  std::size_t i = 0;
  for (; i + 4 * Vec::W <= n; i += 4 * Vec::W) {
    a0 = fmadd(load(x + i), load(y + i), a0);
    a1 = fmadd(load(x + i + Vec::W), load(y + i + Vec::W), a1);
    a2 = fmadd(load(x + i + 2 * Vec::W), load(y + i + 2 * Vec::W), a2);
    a3 = fmadd(load(x + i + 3 * Vec::W), load(y + i + 3 * Vec::W), a3);
  }
  for (; i + Vec::W <= n; i += Vec::W) a0 = fmadd(load(x + i), load(y + i), a0);
  if (i < n) a1 = fmadd(load_pad(x + i, n - i, 0.0f), load_pad(y + i, n - i, 0.0f), a1);
  return hsum(add(add(a0, a1), add(a2, a3)));
}

// Sum of (x[i] - m)^2.
inline float sum_sq_dev(const float* x, std::size_t n, float m) {
  const Vec mv = set1(m);
  Vec a0 = zero(), a1 = zero();
  std::size_t i = 0;
  for (; i + 2 * Vec::W <= n; i += 2 * Vec::W) {
    const Vec d0 = sub(load(x + i), mv), d1 = sub(load(x + i + Vec::W), mv);
    a0 = fmadd(d0, d0, a0);
    a1 = fmadd(d1, d1, a1);
  }
  for (; i + Vec::W <= n; i += Vec::W) {
    const Vec d = sub(load(x + i), mv);
    a0 = fmadd(d, d, a0);
  }
  if (i < n) {
    const Vec d = sub(load_pad(x + i, n - i, m), mv);  // padding with m contributes 0
    a1 = fmadd(d, d, a1);
  }
  return hsum(add(a0, a1));
}

inline std::size_t first_nan(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != x[i]) return i;
  return n;
}

// Max (is_max) or min of x[0..n), n >= 1; NaN -> n is returned through *nan_at.
template <bool is_max>
inline float extreme(const float* x, std::size_t n, std::size_t* nan_at) {
  Vec m0 = set1(x[0]), m1 = m0;
  Mask nan = is_nan(m0);
  std::size_t i = 0;
  for (; i + 2 * Vec::W <= n; i += 2 * Vec::W) {
    const Vec v0 = load(x + i), v1 = load(x + i + Vec::W);
    nan = mask_or(nan, mask_or(is_nan(v0), is_nan(v1)));
    m0 = is_max ? max(m0, v0) : min(m0, v0);
    m1 = is_max ? max(m1, v1) : min(m1, v1);
  }
  for (; i < n; i += Vec::W) {
    const Vec v = load_pad(x + i, n - i < Vec::W ? n - i : Vec::W, x[0]);
    nan = mask_or(nan, is_nan(v));
    m0 = is_max ? max(m0, v) : min(m0, v);
  }
  *nan_at = any(nan) ? first_nan(x, n) : n;
  return is_max ? hmax(max(m0, m1)) : hmin(min(m0, m1));
}

// First index whose value equals m (m is known to occur).
inline std::size_t first_equal(const float* x, std::size_t n, float m) {
  const Vec mv = set1(m);
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W) {
    const unsigned bits = mask_bits(eq(load(x + i), mv));
    if (bits) return i + static_cast<std::size_t>(__builtin_ctz(bits));
  }
  for (; i < n; ++i)
    if (x[i] == m) return i;
  return n;
}

}  // namespace trueno::cpu::TRUENO_ISA
