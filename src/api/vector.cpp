// trueno::Vector: thin owning wrappers over trueno::ops.
#include "trueno/vector.h"

#include "api/backend_choice.h"
#include "trueno/ops.h"

namespace trueno {

Vector::Vector(std::size_t n, float value) : data_(n, value) {}
Vector::Vector(std::initializer_list<float> values) : data_(values.begin(), values.end()) {}

Vector Vector::from(std::span<const float> values) {
  Vector v;
  v.data_.assign(values.begin(), values.end());
  return v;
}

Vector& Vector::on(Backend b) {
  require_available(b);
  backend_ = b;
  return *this;
}

namespace {
Vector like(const Vector& src, std::optional<Backend> b) {
  Vector v(src.size());
  if (b) v.on(*b);
  return v;
}
}  // namespace

#define VECTOR_BINARY(name)                                              \
  Vector Vector::name(const Vector& a, const Vector& b) {               \
    const auto be = detail::combine("Vector::" #name, a.backend_, b.backend_); \
    Vector out = like(a, be);                                            \
    ops::name(a.span(), b.span(), out.span(), be);                       \
    return out;                                                          \
  }
VECTOR_BINARY(add)
VECTOR_BINARY(sub)
VECTOR_BINARY(mul)
VECTOR_BINARY(div)
VECTOR_BINARY(swiglu)

Vector Vector::fma(const Vector& a, const Vector& b, const Vector& c) {
  const auto be = detail::combine("Vector::fma", detail::combine("Vector::fma", a.backend_, b.backend_), c.backend_);
  Vector out = like(a, be);
  ops::fma(a.span(), b.span(), c.span(), out.span(), be);
  return out;
}

float Vector::dot(const Vector& a, const Vector& b) {
  return ops::dot(a.span(), b.span(), detail::combine("Vector::dot", a.backend_, b.backend_));
}

#define VECTOR_UNARY(name)                 \
  Vector Vector::name() const {            \
    Vector out = like(*this, backend_);    \
    ops::name(span(), out.span(), backend_); \
    return out;                            \
  }
VECTOR_UNARY(abs)
VECTOR_UNARY(relu)
VECTOR_UNARY(exp)
VECTOR_UNARY(sigmoid)
VECTOR_UNARY(tanh)
VECTOR_UNARY(gelu_tanh)
VECTOR_UNARY(gelu_erf)
VECTOR_UNARY(silu)
VECTOR_UNARY(softmax)
VECTOR_UNARY(log_softmax)

Vector Vector::scale(float alpha) const {
  Vector out = like(*this, backend_);
  ops::scale(span(), alpha, out.span(), backend_);
  return out;
}

Vector Vector::clamp(float lo, float hi) const {
  Vector out = like(*this, backend_);
  ops::clamp(span(), lo, hi, out.span(), backend_);
  return out;
}

Vector Vector::rmsnorm(const Vector& weight, float eps) const {
  const auto be = detail::combine("Vector::rmsnorm", backend_, weight.backend_);
  Vector out = like(*this, be);
  ops::rmsnorm(span(), weight.span(), eps, out.span(), be);
  return out;
}

Vector Vector::layernorm(const Vector& weight, const Vector& bias, float eps) const {
  const auto be = detail::combine("Vector::layernorm", detail::combine("Vector::layernorm", backend_, weight.backend_),
                                  bias.backend_);
  Vector out = like(*this, be);
  ops::layernorm(span(), weight.span(), bias.span(), eps, out.span(), be);
  return out;
}

float Vector::sum() const { return ops::sum(span(), backend_); }
float Vector::max() const { return ops::max(span(), backend_); }
float Vector::min() const { return ops::min(span(), backend_); }
std::size_t Vector::argmax() const { return ops::argmax(span(), backend_); }
std::size_t Vector::argmin() const { return ops::argmin(span(), backend_); }
float Vector::norm_l2() const { return ops::norm_l2(span(), backend_); }
float Vector::mean() const { return ops::mean(span(), backend_); }
float Vector::variance() const { return ops::variance(span(), backend_); }

std::vector<std::uint16_t> Vector::to_f16() const {
  std::vector<std::uint16_t> out(size());
  ops::f32_to_f16(span(), out, backend_);
  return out;
}
std::vector<std::uint16_t> Vector::to_bf16() const {
  std::vector<std::uint16_t> out(size());
  ops::f32_to_bf16(span(), out, backend_);
  return out;
}
Vector Vector::from_f16(std::span<const std::uint16_t> halves) {
  Vector v(halves.size());
  ops::f16_to_f32(halves, v.span());
  return v;
}
Vector Vector::from_bf16(std::span<const std::uint16_t> halves) {
  Vector v(halves.size());
  ops::bf16_to_f32(halves, v.span());
  return v;
}

}  // namespace trueno
