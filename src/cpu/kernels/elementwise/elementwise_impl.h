// Element-wise kernels, written once over the vector API and compiled per ISA (elementwise_<isa>.cpp).
// Tails go through a zero-padded vector so they run the same code as full vectors.
#pragma once
#include <cstddef>

#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/math_impl.h"
#include "cpu/kernels/vec_util.h"

namespace trueno::cpu::TRUENO_ISA {

namespace kernels {

void add(const float* a, const float* b, float* out, std::size_t n) {
  map2(a, b, out, n, [](Vec x, Vec y) { return TRUENO_ISA::add(x, y); });
}
void sub(const float* a, const float* b, float* out, std::size_t n) {
  map2(a, b, out, n, [](Vec x, Vec y) { return TRUENO_ISA::sub(x, y); });
}
void mul(const float* a, const float* b, float* out, std::size_t n) {
  map2(a, b, out, n, [](Vec x, Vec y) { return TRUENO_ISA::mul(x, y); });
}
void div(const float* a, const float* b, float* out, std::size_t n) {
  map2(a, b, out, n, [](Vec x, Vec y) { return TRUENO_ISA::div(x, y); });
}
void swiglu(const float* a, const float* b, float* out, std::size_t n) {
  map2(a, b, out, n, [](Vec x, Vec y) { return TRUENO_ISA::mul(times_sigmoid(x, x), y); });
}
void scale(const float* x, float alpha, float* out, std::size_t n) {
  const Vec s = set1(alpha);
  map1(x, out, n, [s](Vec v) { return TRUENO_ISA::mul(v, s); });
}
void clamp(const float* x, float lo, float hi, float* out, std::size_t n) {
  // NaN stays NaN: select on explicit comparisons instead of min/max, whose NaN rules differ by ISA.
  const Vec l = set1(lo), h = set1(hi);
  map1(x, out, n, [l, h](Vec v) { return select(lt(v, l), l, select(gt(v, h), h, v)); });
}
void fma(const float* a, const float* b, const float* c, float* out, std::size_t n) {
  // Always mul then add (two roundings), on every backend: see contracts/elementwise.yaml.
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W)
    store(out + i, TRUENO_ISA::add(TRUENO_ISA::mul(load(a + i), load(b + i)), load(c + i)));
  if (i < n) {
    const std::size_t r = n - i;
    const Vec v = TRUENO_ISA::add(TRUENO_ISA::mul(load_tail(a + i, r), load_tail(b + i, r)), load_tail(c + i, r));
    store_tail(out + i, v, r);
  }
}
void abs(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return TRUENO_ISA::abs(v); });
}
void relu(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return select(gt(v, zero()), v, select(is_nan(v), v, zero())); });
}
void exp(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return vexp(v); });
}
void sigmoid(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return times_sigmoid(set1(1.0f), v); });
}
void tanh(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return vtanh(v); });
}
void gelu_tanh(const float* x, float* out, std::size_t n) {
  // 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
  map1(x, out, n, [](Vec v) {
    const Vec v3 = TRUENO_ISA::mul(TRUENO_ISA::mul(v, v), v);
    const Vec u2 = TRUENO_ISA::mul(madd(v3, set1(0.044715f), v), set1(1.5957691216057308f));
    return times_sigmoid(v, u2);
  });
}
void gelu_erf(const float* x, float* out, std::size_t n) {
  // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)
  map1(x, out, n, [](Vec v) {
    const Vec e = verfc(TRUENO_ISA::mul(v, set1(-0.70710678118654752f)));
    const Vec y = TRUENO_ISA::mul(TRUENO_ISA::mul(v, set1(0.5f)), e);
    return select(eq(v, set1(-__builtin_inff())), set1(-0.0f), y);
  });
}
void silu(const float* x, float* out, std::size_t n) {
  map1(x, out, n, [](Vec v) { return times_sigmoid(v, v); });
}

}  // namespace kernels
}  // namespace trueno::cpu::TRUENO_ISA
