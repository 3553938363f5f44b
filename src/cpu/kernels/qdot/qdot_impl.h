// Quantized block dot products: one weight row (nb blocks) against activations quantized to Q8_0
// (for Q4_0/Q8_0 weights) or Q8_K (for k-quant weights), integer sums per (sub-)block, one float
// multiply-add per block. Written once as plain loops over the block structs; compiled per ISA
// (the compiler vectorizes the integer inner loops with that ISA's instructions), the scalar
// reference being the same code without vectorization. Hand-written intrinsics replace an entry
// where they pay (qdot_avx2.cpp).
//
// Note [Quantized activations]
// The fused kernels quantize x once per call (Q8_0: 32-element blocks, Q8_K: 256) and multiply
// integers: |x - x_q| <= d_x/2 per element, d_x = block max|x| / 127, so the result differs from
// the dot product with the unquantized x by at most sum_i |w_i| d_x(i)/2 (contracts/qdot.yaml).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"

namespace trueno::cpu::TRUENO_ISA {

template <class Block>
inline Block load_block(const void* p, std::size_t i) {
  Block b;
  std::memcpy(&b, static_cast<const unsigned char*>(p) + i * sizeof(Block), sizeof(Block));
  return b;
}

// The eight 6-bit scales and the eight mins of a Q4_K/Q5_K block as bytes (sc in the low 8, m in
// the high 8), decoded with 32-bit word operations (layout: ../shared/docs/quant-formats.md).
inline void k_scales_bytes(const unsigned char* packed, std::uint8_t out[16]) {
  std::uint32_t s[3];
  std::memcpy(s, packed, 12);
  const std::uint32_t lo6 = 0x3f3f3f3fu, lo4 = 0x0f0f0f0fu, lo2 = 0x03030303u;
  const std::uint32_t w[4] = {s[0] & lo6, (s[2] & lo4) | (((s[0] >> 6) & lo2) << 4), s[1] & lo6,
                              ((s[2] >> 4) & lo4) | (((s[1] >> 6) & lo2) << 4)};
  std::memcpy(out, w, 16);
}

// An f16 scale stored at p (any alignment).
inline float f16_at(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return detail::f16_bits_to_f32(h);
}

inline float generic_dot_q8_0_q8_0(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto bw = load_block<quant::BlockQ8_0>(w, i);
    const auto bx = load_block<quant::BlockQ8_0>(x, i);
    int s = 0;
    for (int j = 0; j < 32; ++j) s += bw.qs[j] * bx.qs[j];
    sum += detail::f16_bits_to_f32(bw.d) * detail::f16_bits_to_f32(bx.d) * static_cast<float>(s);
  }
  return sum;
}

inline float generic_dot_q4_0_q8_0(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto bw = load_block<quant::BlockQ4_0>(w, i);
    const auto bx = load_block<quant::BlockQ8_0>(x, i);
    int s = 0;
    for (int j = 0; j < 16; ++j) s += ((bw.qs[j] & 0xF) - 8) * bx.qs[j] + ((bw.qs[j] >> 4) - 8) * bx.qs[j + 16];
    sum += detail::f16_bits_to_f32(bw.d) * detail::f16_bits_to_f32(bx.d) * static_cast<float>(s);
  }
  return sum;
}

// Q4_K/Q5_K: d*sum_j sc_j (q . x)_j - dmin * sum_j m_j * (sum of x_q over sub-block j).
template <class Block, bool kFifthBit>
inline float generic_dot_k45(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto bw = load_block<Block>(w, i);
    const auto bx = load_block<quant::BlockQ8_K>(x, i);
    int sumi = 0, summ = 0;
    for (int c = 0; c < 4; ++c) {
      int sc0, m0, sc1, m1;
      quant::k_scale_min(bw.scales, 2 * c, &sc0, &m0);
      quant::k_scale_min(bw.scales, 2 * c + 1, &sc1, &m1);
      int s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        int q0 = bw.qs[32 * c + l] & 0xF, q1 = bw.qs[32 * c + l] >> 4;
        if constexpr (kFifthBit) {
          q0 += ((bw.qh[l] >> (2 * c)) & 1) << 4;
          q1 += ((bw.qh[l] >> (2 * c + 1)) & 1) << 4;
        }
        s0 += q0 * bx.qs[64 * c + l];
        s1 += q1 * bx.qs[64 * c + 32 + l];
      }
      sumi += sc0 * s0 + sc1 * s1;
      summ += m0 * (bx.bsums[4 * c] + bx.bsums[4 * c + 1]) + m1 * (bx.bsums[4 * c + 2] + bx.bsums[4 * c + 3]);
    }
    const float d = detail::f16_bits_to_f32(bw.d) * bx.d, dmin = detail::f16_bits_to_f32(bw.dmin) * bx.d;
    sum += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
  }
  return sum;
}

// Eight interleaved Q4_K rows (Note [Interleaved rows], quant/blocks.h) against one Q8_K row: per row
// the integer sums and float steps of generic_dot_k45, in its order, so out[r] is its dot of row r.
inline void generic_dot_x8_q4_k_q8_k(const void* w, const void* x, std::size_t nb, float* out) {
  float sum[8] = {};
  for (std::size_t i = 0; i < nb; ++i) {
    const auto b = load_block<quant::BlockQ4_Kx8>(w, i);
    const auto bx = load_block<quant::BlockQ8_K>(x, i);
    for (int r = 0; r < 8; ++r) {
      int sumi = 0, summ = 0;
      for (int c = 0; c < 4; ++c) {
        int s0 = 0, s1 = 0;
        for (int l = 0; l < 32; ++l) {
          const int q = b.qs[c][l / 4][r][l % 4];
          s0 += (q & 0xF) * bx.qs[64 * c + l];
          s1 += (q >> 4) * bx.qs[64 * c + 32 + l];
        }
        sumi += b.scales[2 * c][r] * s0 + b.scales[2 * c + 1][r] * s1;
        summ += b.mins[2 * c][r] * (bx.bsums[4 * c] + bx.bsums[4 * c + 1]) +
                b.mins[2 * c + 1][r] * (bx.bsums[4 * c + 2] + bx.bsums[4 * c + 3]);
      }
      const float d = detail::f16_bits_to_f32(b.d[r]) * bx.d, dmin = detail::f16_bits_to_f32(b.dmin[r]) * bx.d;
      sum[r] += d * static_cast<float>(sumi) - dmin * static_cast<float>(summ);
    }
  }
  for (int r = 0; r < 8; ++r) out[r] = sum[r];
}

// Eight interleaved Q6_K rows (Note [Interleaved rows]) against one Q8_K row: per row the integer sum
// and float steps of generic_dot_q6_k_q8_k, in its order, so out[r] is its dot of row r.
inline void generic_dot_x8_q6_k_q8_k(const void* w, const void* x, std::size_t nb, float* out) {
  float sum[8] = {};
  for (std::size_t i = 0; i < nb; ++i) {
    const auto b = load_block<quant::BlockQ6_Kx8>(w, i);
    const auto bx = load_block<quant::BlockQ8_K>(x, i);
    for (int r = 0; r < 8; ++r) {
      int sumi = 0;
      for (int h = 0; h < 2; ++h) {
        int s[8] = {};
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16, k = l / 4, e = l % 4;
          const int ql0 = b.q[h][k][0][r][e], ql1 = b.q[h][k][1][r][e], qh = b.q[h][k][2][r][e];
          const std::int8_t* qx = bx.qs + 128 * h;
          s[is] += (((ql0 & 0xF) | (((qh >> 0) & 3) << 4)) - 32) * qx[l];
          s[is + 2] += (((ql1 & 0xF) | (((qh >> 2) & 3) << 4)) - 32) * qx[l + 32];
          s[is + 4] += (((ql0 >> 4) | (((qh >> 4) & 3) << 4)) - 32) * qx[l + 64];
          s[is + 6] += (((ql1 >> 4) | (((qh >> 6) & 3) << 4)) - 32) * qx[l + 96];
        }
        for (int k = 0; k < 8; ++k) sumi += b.scales[4 * h + k / 2][r][k % 2] * s[k];
      }
      sum[r] += detail::f16_bits_to_f32(b.d[r]) * bx.d * static_cast<float>(sumi);
    }
  }
  for (int r = 0; r < 8; ++r) out[r] = sum[r];
}

// Eight interleaved Q8_0 rows (Note [Interleaved rows]) against one Q8_0 row: per row the integer sum
// and float steps of generic_dot_q8_0_q8_0, in its order, so out[r] is its dot of row r.
inline void generic_dot_x8_q8_0_q8_0(const void* w, const void* x, std::size_t nb, float* out) {
  float sum[8] = {};
  for (std::size_t i = 0; i < nb; ++i) {
    const auto b = load_block<quant::BlockQ8_0x8>(w, i);
    const auto bx = load_block<quant::BlockQ8_0>(x, i);
    for (int r = 0; r < 8; ++r) {
      int s = 0;
      for (int j = 0; j < 32; ++j) s += b.qs[j / 4][r][j % 4] * bx.qs[j];
      sum[r] += detail::f16_bits_to_f32(b.d[r]) * detail::f16_bits_to_f32(bx.d) * static_cast<float>(s);
    }
  }
  for (int r = 0; r < 8; ++r) out[r] = sum[r];
}

inline float generic_dot_q6_k_q8_k(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto bw = load_block<quant::BlockQ6_K>(w, i);
    const auto bx = load_block<quant::BlockQ8_K>(x, i);
    int sumi = 0;
    for (int h = 0; h < 2; ++h) {
      const std::uint8_t* ql = bw.ql + 64 * h;
      const std::uint8_t* qh = bw.qh + 32 * h;
      const std::int8_t* sc = bw.scales + 8 * h;
      const std::int8_t* qx = bx.qs + 128 * h;
      int s[8] = {};
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        s[is] += (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32) * qx[l];
        s[is + 2] += (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32) * qx[l + 32];
        s[is + 4] += (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32) * qx[l + 64];
        s[is + 6] += (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32) * qx[l + 96];
      }
      for (int k = 0; k < 8; ++k) sumi += sc[k] * s[k];
    }
    sum += detail::f16_bits_to_f32(bw.d) * bx.d * static_cast<float>(sumi);
  }
  return sum;
}

}  // namespace trueno::cpu::TRUENO_ISA
