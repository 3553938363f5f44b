// The convert kernels of the tiers without F16C (SSE2, AVX), over convert_sse2_impl.h.
#pragma once

namespace trueno::cpu::TRUENO_ISA::kernels {

void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) { narrow8(x, out, n, to_half4); }
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen8(x, out, n, half8_to_f32); }
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) { narrow8(x, out, n, to_bf16_4); }
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen8(x, out, n, bf16x8_to_f32); }

}  // namespace trueno::cpu::TRUENO_ISA::kernels
