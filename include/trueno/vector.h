// trueno::Vector: an owning, 64-byte aligned f32 vector whose ops pick the backend for the user.
// A Vector may be forced to a backend (v.on(Backend::AVX2)); ops on forced operands use it,
// operands forced to different backends are an error, unforced ones follow current_backend().
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "trueno/aligned.h"
#include "trueno/backend.h"

namespace trueno {

class Vector {
 public:
  Vector() = default;
  explicit Vector(std::size_t n, float value = 0.0f);
  Vector(std::initializer_list<float> values);
  static Vector from(std::span<const float> values);

  std::size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  std::span<float> span() { return data_; }
  std::span<const float> span() const { return data_; }
  float& operator[](std::size_t i) { return data_[i]; }
  float operator[](std::size_t i) const { return data_[i]; }

  // Forces this object's ops to backend b (checked now: unavailable throws BackendUnavailable).
  Vector& on(Backend b);
  std::optional<Backend> backend() const { return backend_; }

  static Vector add(const Vector& a, const Vector& b);
  static Vector sub(const Vector& a, const Vector& b);
  static Vector mul(const Vector& a, const Vector& b);
  static Vector div(const Vector& a, const Vector& b);
  static Vector swiglu(const Vector& gate, const Vector& up);
  static Vector fma(const Vector& a, const Vector& b, const Vector& c);
  static float dot(const Vector& a, const Vector& b);

  Vector scale(float alpha) const;
  Vector clamp(float lo, float hi) const;
  Vector abs() const;
  Vector relu() const;
  Vector exp() const;
  Vector sigmoid() const;
  Vector tanh() const;
  Vector gelu_tanh() const;
  Vector gelu_erf() const;
  Vector silu() const;
  Vector softmax() const;
  Vector log_softmax() const;
  Vector rmsnorm(const Vector& weight, float eps) const;
  Vector layernorm(const Vector& weight, const Vector& bias, float eps) const;

  float sum() const;
  float max() const;
  float min() const;
  std::size_t argmax() const;
  std::size_t argmin() const;
  float norm_l2() const;
  float mean() const;
  float variance() const;

  std::vector<std::uint16_t> to_f16() const;
  std::vector<std::uint16_t> to_bf16() const;
  static Vector from_f16(std::span<const std::uint16_t> halves);
  static Vector from_bf16(std::span<const std::uint16_t> halves);

 private:
  std::vector<float, AlignedAllocator<float>> data_;
  std::optional<Backend> backend_;
};

}  // namespace trueno
