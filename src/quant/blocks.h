// The GGUF block layouts as structs (sizes checked against the format), QK_K = 256.
#pragma once
#include <cstdint>

namespace trueno::quant {

constexpr int kQK = 256;  // elements per k-quant super-block

struct BlockQ4_0 {  // 32 elements: x = (nibble - 8) * d
  std::uint16_t d;
  std::uint8_t qs[16];
};
struct BlockQ8_0 {  // 32 elements: x = q * d
  std::uint16_t d;
  std::int8_t qs[32];
};
struct BlockQ4_K {  // 8 sub-blocks of 32: x = d * sc * q - dmin * m, 6-bit sc/m packed in scales
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qs[128];
};
struct BlockQ5_K {  // as Q4_K with a fifth bit per element in qh
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qh[32];
  std::uint8_t qs[128];
};
struct BlockQ6_K {  // 16 sub-blocks of 16: x = d * scale * (q - 32), q 6-bit
  std::uint8_t ql[128];
  std::uint8_t qh[64];
  std::int8_t scales[16];
  std::uint16_t d;
};
struct BlockQ8_K {  // activations: x = q * d, bsums = sums of each 16 q
  float d;
  std::int8_t qs[256];
  std::int16_t bsums[16];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ8_0) == 34, "32-element blocks");
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210, "k-quants");
static_assert(sizeof(BlockQ8_K) == 292, "Q8_K");

// Note [Interleaved rows]
// Decode multiplies each weight row with one activation row. A single-row dot unpacks every block,
// decodes its packed 6-bit scales and needs horizontal sums to finish; with 8 consecutive rows stored
// interleaved, one 256-bit register holds 4 bytes of each of the 8 rows, the activations are broadcast
// (4 bytes to every 32-bit lane), and every lane accumulates its own row: no horizontal sums, scales
// decoded once at load. Block i of a group of 8 Q4_K rows (the same as llama.cpp's q4_Kx8 in spirit):
// the 8 rows' d and dmin, each row's 8 sub-block scales and mins decoded to bytes, and the rows' qs in
// 4-byte pieces: for each 32-byte chunk c of qs and each piece k of it, rows 0..7's bytes
// qs[32c + 4k .. 32c + 4k + 3] (32 bytes). quant/packed_matrix.cpp writes it (PackedQuantMatrix).
struct BlockQ4_Kx8 {
  std::uint16_t d[8], dmin[8];  // row r's f16 d, dmin
  std::uint8_t scales[8][8];    // [sub-block j][row r], 6-bit
  std::uint8_t mins[8][8];      // [sub-block j][row r], 6-bit
  std::uint8_t qs[4][8][8][4];  // [chunk c][piece k][row r][byte b] = row r's qs[32c + 4k + b]
};
static_assert(sizeof(BlockQ4_Kx8) == 1184, "8 interleaved Q4_K blocks");

// Block i of a group of 8 Q6_K rows, the same idea: the 8 rows' d; their 16 scales in pairs (so one
// vpmovsxbw gives lane r = row r's scales 2i, 2i+1, the operand against bsums 2i, 2i+1); ql and qh in
// 4-byte pieces as Q4_K's qs, in the order the kernel reads them: for half h and piece k, the piece of
// ql chunk 2h, of ql chunk 2h + 1, then of qh chunk h (the 3 x 32 bytes that make 4 x 4 levels of each
// row). One ascending stream per block: with ql and qh in separate regions the decode from memory ran
// at a third of the speed (the prefetchers did not follow the jumps). The same 1680 bytes as the 8
// blocks (nothing is decoded at load).
struct BlockQ6_Kx8 {
  std::uint16_t d[8];              // row r's f16 d
  std::int8_t scales[8][8][2];     // [pair i][row r][s] = row r's scales[2i + s]
  std::uint8_t q[2][8][3][8][4];   // [h][piece k][0, 1: ql chunk 2h, 2h + 1; 2: qh chunk h][row r][byte b]:
                                   // row r's ql[64h + 32p + 4k + b] (p = 0, 1), qh[32h + 4k + b]
};
static_assert(sizeof(BlockQ6_Kx8) == 8 * sizeof(BlockQ6_K), "8 interleaved Q6_K blocks");

// Block i of a group of 8 Q8_0 rows, the same idea: the 8 rows' d, then their qs in 4-byte pieces (for
// piece k, rows 0..7's qs[4k .. 4k + 3]: 32 bytes, one 32-bit lane per row). The same 272 bytes.
struct BlockQ8_0x8 {
  std::uint16_t d[8];       // row r's f16 d
  std::int8_t qs[8][8][4];  // [piece k][row r][byte b] = row r's qs[4k + b]
};
static_assert(sizeof(BlockQ8_0x8) == 8 * sizeof(BlockQ8_0), "8 interleaved Q8_0 blocks");

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block. Internal linkage: included by
// ISA-compiled kernels (Note [ISA namespaces]).
static inline void k_scale_min(const std::uint8_t* scales, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *m = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

}  // namespace trueno::quant
