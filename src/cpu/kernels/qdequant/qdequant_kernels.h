// The dequant kernel entries: f32 decoders of nb blocks (qdequant_impl.h), one per quantized type.
#pragma once

namespace trueno::cpu::TRUENO_ISA::kernels {

void dequant_q4_0(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q4_0(static_cast<const unsigned char*>(src), dst, nb); }
void dequant_q8_0(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q8_0(static_cast<const unsigned char*>(src), dst, nb); }
void dequant_q4_k(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q4_k(static_cast<const unsigned char*>(src), dst, nb); }
void dequant_q5_k(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q5_k(static_cast<const unsigned char*>(src), dst, nb); }
void dequant_q6_k(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q6_k(static_cast<const unsigned char*>(src), dst, nb); }
void dequant_q8_k(const void* src, float* dst, std::size_t nb) { TRUENO_ISA::dequant_q8_k(static_cast<const unsigned char*>(src), dst, nb); }

}  // namespace trueno::cpu::TRUENO_ISA::kernels
