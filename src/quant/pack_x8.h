// Repacking 8 consecutive quantized rows into the interleaved layout of the 8-row decode kernels
// (Note [Interleaved rows], quant/blocks.h). Internal: PackedQuantMatrix and the contract tests use it.
#pragma once
#include <cstddef>

#include "trueno/quant.h"

namespace trueno::quant {

// rows: 8 Q4_K rows of nb blocks, row_bytes apart -> out: nb BlockQ4_Kx8 (nb * 1184 bytes).
void pack_q4_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);
// rows: 8 Q6_K rows of nb blocks, row_bytes apart -> out: nb BlockQ6_Kx8 (nb * 1680 bytes).
void pack_q6_k_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);
// rows: 8 Q8_0 rows of nb blocks, row_bytes apart -> out: nb BlockQ8_0x8 (nb * 272 bytes).
void pack_q8_0_x8(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);

// The 8-row layout of a type: bytes per block of 8 rows, and its packer. Q4_K, Q6_K and Q8_0 have one
// (InvalidArgument for another type).
struct X8Layout {
  std::size_t block_bytes;
  void (*pack)(const std::byte* rows, std::size_t row_bytes, std::size_t nb, std::byte* out);
};
X8Layout x8_layout(QuantType type);

}  // namespace trueno::quant
