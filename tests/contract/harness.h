// Contract-test harness: inputs for any kernel kind, running a kernel from a table, f64 references.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <string_view>

#include "cpu/registry.h"

namespace trueno::test {

constexpr double kU = 5.9604644775390625e-8;  // 2^-24
inline double gamma_n(double n) { return n * kU / (1.0 - n * kU); }

// Number of f32 values between a and b; +0 == -0; NaN matches only NaN; inf only itself.
inline std::int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<std::int64_t>::max();
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return std::numeric_limits<std::int64_t>::max();
  auto ordered = [](float f) {
    std::int32_t i;
    std::memcpy(&i, &f, 4);
    return i >= 0 ? static_cast<std::int64_t>(i) : -static_cast<std::int64_t>(i & 0x7fffffff);
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Same NaN-ness and, for infinities, the same value.
inline bool same_class(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return true;
}

struct Inputs {
  std::size_t n = 0;               // vector length
  std::size_t m = 0, k = 0, nn = 0;  // matrices: A[m][k] (lda), B[k][nn] (ldb), C[m][nn] (ldc)
  std::size_t lda = 0, ldb = 0, ldc = 0;
  std::vector<float> a, b, c;      // operands: x / A, y / weight / B, third operand / bias
  std::vector<std::uint16_t> h;    // f16/bf16 input
  float alpha = 1.0f, lo = -10.0f, hi = 10.0f, eps = 1e-5f;
  std::size_t offset = 0;          // misalignment, in elements, of every buffer passed to the kernel
  std::vector<std::byte> wq, xq;   // quantized weight row and activations (QDot)
  std::size_t nb = 0;              // blocks (QDot, QDotRows)
};

struct Output {
  std::vector<float> f;
  std::vector<std::uint16_t> h;
  float value = 0.0f;
  std::size_t index = 0;
};

struct Reference {
  std::vector<double> f;    // element-wise truth (or matrix, row-major [m][nn] / [m])
  std::vector<double> mag;  // per-element magnitude M_i for rowwise/matvec bounds
  double value = 0.0;       // scalar truth
  double magnitude = 0.0;   // S for reduction bounds
  double extra = 0.0;       // additive term (variance's gamma(n)^2 mean|x|^2)
  double abs_sum = 0.0;     // sum |x| (compensated bounds)
  double frob_mag = 0.0;    // norm_F(|A||B|)
  double act_err = 0.0;     // QDot: sum_i |w_i| d_x(i) / 2, the activation quantization bound
  double value_unquantized = 0.0;  // QDot: sum_i w_i x_i with the f32 activations
  std::size_t index = 0;
  bool has_index = false;
  std::vector<std::uint16_t> h;  // exact conversions
  bool has_f = false, has_value = false, has_h = false;
};

Output run_kernel(const cpu::KernelInfo& k, const cpu::KernelTable& t, const Inputs& in);
Reference reference64(const cpu::KernelInfo& k, const Inputs& in);
// QDot: the weight and activation types an op name like dot_q4_k_q8_k names.
void qdot_types(std::string_view op, int* weight_type_id, int* act_type_id);
bool is_vector_kind(cpu::Kind kind);

}  // namespace trueno::test
