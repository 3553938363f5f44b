// Block decoders of every quantized type, templated on the output type: T = float is the format's f32
// arithmetic (the dequant kernels, compiled per ISA, where the compiler vectorizes the inner loops),
// T = double gives the exact values (trueno::dequantize_exact). Rows may start at any address: blocks
// are copied out with memcpy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"

namespace trueno::cpu::TRUENO_ISA {

using namespace trueno::quant;
using trueno::detail::f16_bits_to_f32;

template <class Block>
Block block_at(const unsigned char* p, std::size_t i) {
  Block b;
  std::memcpy(&b, p + i * sizeof(Block), sizeof(Block));
  return b;
}

// Every decoder is a template on the output type T: T = float is the format's f32 arithmetic,
// T = double gives the exact values (f16 scales times small integers fit in 53 bits).
template <class T>
void dequant_q4_0(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, y += 32) {
    const auto b = block_at<BlockQ4_0>(p, i);
    const T d = f16_bits_to_f32(b.d);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<T>((b.qs[j] & 0xF) - 8) * d;
      y[j + 16] = static_cast<T>((b.qs[j] >> 4) - 8) * d;
    }
  }
}

template <class T>
void dequant_q8_0(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, y += 32) {
    const auto b = block_at<BlockQ8_0>(p, i);
    const T d = f16_bits_to_f32(b.d);
    for (int j = 0; j < 32; ++j) y[j] = static_cast<T>(b.qs[j]) * d;
  }
}

// Q4_K and Q5_K share the layout but for the fifth bit (qh == nullptr for Q4_K).
template <class T>
void dequant_k45(const std::uint8_t* scales, const std::uint8_t* qs, const std::uint8_t* qh, T d, T dmin, T* y) {
  for (int c = 0; c < 4; ++c) {  // chunk c: sub-blocks 2c (low nibbles) and 2c+1 (high nibbles)
    int sc0, m0, sc1, m1;
    k_scale_min(scales, 2 * c, &sc0, &m0);
    k_scale_min(scales, 2 * c + 1, &sc1, &m1);
    const T d0 = d * static_cast<T>(sc0), min0 = dmin * static_cast<T>(m0);
    const T d1 = d * static_cast<T>(sc1), min1 = dmin * static_cast<T>(m1);
    for (int l = 0; l < 32; ++l) {
      int q0 = qs[32 * c + l] & 0xF, q1 = qs[32 * c + l] >> 4;
      if (qh) {
        q0 += ((qh[l] >> (2 * c)) & 1) << 4;
        q1 += ((qh[l] >> (2 * c + 1)) & 1) << 4;
      }
      y[64 * c + l] = d0 * static_cast<T>(q0) - min0;
      y[64 * c + 32 + l] = d1 * static_cast<T>(q1) - min1;
    }
  }
}

template <class T>
void dequant_q4_k(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, y += kQK) {
    const auto b = block_at<BlockQ4_K>(p, i);
    dequant_k45<T>(b.scales, b.qs, nullptr, f16_bits_to_f32(b.d), f16_bits_to_f32(b.dmin), y);
  }
}

template <class T>
void dequant_q5_k(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, y += kQK) {
    const auto b = block_at<BlockQ5_K>(p, i);
    dequant_k45<T>(b.scales, b.qs, b.qh, f16_bits_to_f32(b.d), f16_bits_to_f32(b.dmin), y);
  }
}

template <class T>
void dequant_q6_k(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i) {
    const auto b = block_at<BlockQ6_K>(p, i);
    const T d = f16_bits_to_f32(b.d);
    const std::uint8_t* ql = b.ql;
    const std::uint8_t* qh = b.qh;
    const std::int8_t* sc = b.scales;
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<T>(sc[is]) * static_cast<T>(q1);
        y[l + 32] = d * static_cast<T>(sc[is + 2]) * static_cast<T>(q2);
        y[l + 64] = d * static_cast<T>(sc[is + 4]) * static_cast<T>(q3);
        y[l + 96] = d * static_cast<T>(sc[is + 6]) * static_cast<T>(q4);
      }
    }
  }
}

template <class T>
void dequant_q8_k(const unsigned char* p, T* y, std::size_t nb) {
  for (std::size_t i = 0; i < nb; ++i, y += kQK) {
    const auto b = block_at<BlockQ8_K>(p, i);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<T>(b.d) * static_cast<T>(b.qs[j]);
  }
}

}  // namespace trueno::cpu::TRUENO_ISA
