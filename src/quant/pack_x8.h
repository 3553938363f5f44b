// Repacking 8 consecutive quantized rows into the interleaved layout of the 8-row decode kernels
// (Note [Interleaved rows], quant/blocks.h). Internal: PackedQuantMatrix and the contract tests use it.
#pragma once
#include <cstddef>

namespace trueno::quant {

// rows: 8 Q4_K rows of nb blocks, row_bytes apart -> out: nb BlockQ4_Kx8 (nb * 1184 bytes).
void pack_q4_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);
// rows: 8 Q6_K rows of nb blocks, row_bytes apart -> out: nb BlockQ6_Kx8 (nb * 1680 bytes).
void pack_q6_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);
// rows: 8 Q8_0 rows of nb blocks, row_bytes apart -> out: nb BlockQ8_0x8 (nb * 272 bytes).
void pack_q8_0_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);

}  // namespace trueno::quant
