// Element-wise scalar reference: plain loops, one element at a time. Every other variant is checked
// against these (contracts/elementwise.yaml). Transcendentals share trueno's formulas at width 1.
#include <cmath>

#include "cpu/simd/vec_scalar.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/math_impl.h"

namespace trueno::cpu::scalar {
namespace {
float one(Vec v) { return v.r; }
float sigmoid_times(float x, float u) { return one(times_sigmoid({x}, {u})); }
}  // namespace

namespace kernels {

void add(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
void sub(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
}
void mul(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}
void div(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] / b[i];
}
void swiglu(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = sigmoid_times(a[i], a[i]) * b[i];
}
void scale(const float* x, float alpha, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i] * alpha;
}
void clamp(const float* x, float lo, float hi, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}
void fma(const float* a, const float* b, const float* c, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i] + c[i];  // -ffp-contract=off: two roundings
}
void abs(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::fabs(x[i]);
}
void relu(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i] > 0.0f ? x[i] : (std::isnan(x[i]) ? x[i] : 0.0f);
}
void exp(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = one(vexp({x[i]}));
}
void sigmoid(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = sigmoid_times(1.0f, x[i]);
}
void tanh(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = one(vtanh({x[i]}));
}
void gelu_tanh(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u2 = ((v * v * v) * 0.044715f + v) * 1.5957691216057308f;
    out[i] = sigmoid_times(v, u2);
  }
}
void gelu_erf(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float e = one(verfc({v * -0.70710678118654752f}));
    out[i] = v == -INFINITY ? -0.0f : (v * 0.5f) * e;
  }
}
void silu(const float* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = sigmoid_times(x[i], x[i]);
}

}  // namespace kernels
}  // namespace trueno::cpu::scalar
