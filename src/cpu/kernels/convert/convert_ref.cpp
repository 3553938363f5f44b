// f16/bf16 <-> f32 scalar references (core/half.h). Rounding: to nearest, ties to even (as F16C and
// NEON with the default FPCR). NaNs stay NaN and become quiet, keeping the top payload bits.
#include "core/half.h"
#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::scalar::kernels {

void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::f32_to_f16_bits(x[i]);
}
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::f16_bits_to_f32(x[i]);
}
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::f32_to_bf16_bits(x[i]);
}
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = detail::bf16_bits_to_f32(x[i]);
}

}  // namespace trueno::cpu::scalar::kernels
