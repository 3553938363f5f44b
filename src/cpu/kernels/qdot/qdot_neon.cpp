// Quantized block dot products for NEON, hand-written: 8x8 -> 16-bit products (smull), pairwise
// widening accumulation into int32 (sadalp), one int32 multiply by the sub-block scale. Integer sums
// per block are exact and the float steps are the reference's: bit-identical to it.
#include <arm_neon.h>

#include <cstddef>
#include <type_traits>

#include "cpu/simd/vec_neon.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdot/qdot_impl.h"

namespace trueno::cpu::neon {
namespace {

// sum over 16 lanes of a[i] * b[i] (signed bytes; |a*b| < 2^14), added to acc as 4 int32 lanes.
int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
  return vpadalq_s16(acc, vmull_high_s8(a, b));
}

int8x16_t load_s8(const unsigned char* p) { return vld1q_s8(reinterpret_cast<const std::int8_t*>(p)); }

float f16_at(const unsigned char* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return detail::f16_bits_to_f32(h);
}

void k_scales_bytes(const unsigned char* packed, std::uint8_t out[16]) {
  std::uint32_t s[3];
  std::memcpy(s, packed, 12);
  const std::uint32_t lo6 = 0x3f3f3f3fu, lo4 = 0x0f0f0f0fu, lo2 = 0x03030303u;
  const std::uint32_t w[4] = {s[0] & lo6, (s[2] & lo4) | (((s[0] >> 6) & lo2) << 4), s[1] & lo6,
                              ((s[2] >> 4) & lo4) | (((s[1] >> 6) & lo2) << 4)};
  std::memcpy(out, w, 16);
}

template <bool kFifthBit>
float dot_k45(const void* w, const void* x, std::size_t nb) {
  using Block = std::conditional_t<kFifthBit, quant::BlockQ5_K, quant::BlockQ4_K>;
  const uint8x16_t low4 = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(Block);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_K);
    float dx;
    std::memcpy(&dx, bx + offsetof(quant::BlockQ8_K, d), 4);
    std::uint8_t scm[16];
    k_scales_bytes(bw + offsetof(Block, scales), scm);
    std::int16_t bsums[16];
    std::memcpy(bsums, bx + offsetof(quant::BlockQ8_K, bsums), sizeof bsums);
    int summ = 0;
    for (int j = 0; j < 8; ++j) summ += scm[8 + j] * (bsums[2 * j] + bsums[2 * j + 1]);
    const unsigned char* qs = bw + offsetof(Block, qs);
    const unsigned char* xqs = bx + offsetof(quant::BlockQ8_K, qs);
    int32x4_t sumi = vdupq_n_s32(0);
    for (int c = 0; c < 4; ++c) {
      int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t q = vld1q_u8(qs + 32 * c + 16 * half);
        uint8x16_t q0 = vandq_u8(q, low4), q1 = vshrq_n_u8(q, 4);
        if constexpr (kFifthBit) {
          const uint8x16_t hb = vld1q_u8(bw + offsetof(quant::BlockQ5_K, qh) + 16 * half);
          q0 = vaddq_u8(q0, vshlq_n_u8(vandq_u8(vshlq_u8(hb, vdupq_n_s8(static_cast<std::int8_t>(-2 * c))), one), 4));
          q1 = vaddq_u8(q1, vshlq_n_u8(vandq_u8(vshlq_u8(hb, vdupq_n_s8(static_cast<std::int8_t>(-2 * c - 1))), one), 4));
        }
        s0 = dot16(s0, vreinterpretq_s8_u8(q0), load_s8(xqs + 64 * c + 16 * half));
        s1 = dot16(s1, vreinterpretq_s8_u8(q1), load_s8(xqs + 64 * c + 32 + 16 * half));
      }
      sumi = vmlaq_n_s32(sumi, s0, scm[2 * c]);
      sumi = vmlaq_n_s32(sumi, s1, scm[2 * c + 1]);
    }
    const float d = f16_at(bw + offsetof(Block, d)) * dx, dmin = f16_at(bw + offsetof(Block, dmin)) * dx;
    sum += d * static_cast<float>(vaddvq_s32(sumi)) - dmin * static_cast<float>(summ);
  }
  return sum;
}

}  // namespace

namespace kernels {

float dot_q8_0_q8_0(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(quant::BlockQ8_0);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_0);
    int32x4_t s = dot16(vdupq_n_s32(0), load_s8(bw + 2), load_s8(bx + 2));
    s = dot16(s, load_s8(bw + 18), load_s8(bx + 18));
    sum += f16_at(bw) * f16_at(bx) * static_cast<float>(vaddvq_s32(s));
  }
  return sum;
}

float dot_q4_0_q8_0(const void* w, const void* x, std::size_t nb) {
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  const int8x16_t eight = vdupq_n_s8(8);
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(quant::BlockQ4_0);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_0);
    const uint8x16_t q = vld1q_u8(bw + 2);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, low4)), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
    int32x4_t s = dot16(vdupq_n_s32(0), lo, load_s8(bx + 2));
    s = dot16(s, hi, load_s8(bx + 18));
    sum += f16_at(bw) * f16_at(bx) * static_cast<float>(vaddvq_s32(s));
  }
  return sum;
}

float dot_q4_k_q8_k(const void* w, const void* x, std::size_t nb) { return dot_k45<false>(w, x, nb); }
float dot_q5_k_q8_k(const void* w, const void* x, std::size_t nb) { return dot_k45<true>(w, x, nb); }

float dot_q6_k_q8_k(const void* w, const void* x, std::size_t nb) {
  const uint8x16_t low4 = vdupq_n_u8(0x0F), three = vdupq_n_u8(3);
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(quant::BlockQ6_K);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_K);
    float dx;
    std::memcpy(&dx, bx + offsetof(quant::BlockQ8_K, d), 4);
    std::int8_t sc[16];
    std::memcpy(sc, bw + offsetof(quant::BlockQ6_K, scales), 16);
    std::int16_t bsums[16];
    std::memcpy(bsums, bx + offsetof(quant::BlockQ8_K, bsums), sizeof bsums);
    int offset = 0;  // levels are stored +32
    for (int g = 0; g < 16; ++g) offset += sc[g] * bsums[g];
    const unsigned char* ql = bw + offsetof(quant::BlockQ6_K, ql);
    const unsigned char* qhp = bw + offsetof(quant::BlockQ6_K, qh);
    const unsigned char* xqs = bx + offsetof(quant::BlockQ8_K, qs);
    int32x4_t sumi = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h)
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t ql0 = vld1q_u8(ql + 64 * h + 16 * half), ql1 = vld1q_u8(ql + 64 * h + 32 + 16 * half);
        const uint8x16_t qh = vld1q_u8(qhp + 32 * h + 16 * half);
        const uint8x16_t q[4] = {vorrq_u8(vandq_u8(ql0, low4), vshlq_n_u8(vandq_u8(qh, three), 4)),
                                 vorrq_u8(vandq_u8(ql1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), three), 4)),
                                 vorrq_u8(vshrq_n_u8(ql0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), three), 4)),
                                 vorrq_u8(vshrq_n_u8(ql1, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4))};
        for (int k = 0; k < 4; ++k) {
          const int32x4_t s = dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(q[k]), load_s8(xqs + 128 * h + 32 * k + 16 * half));
          sumi = vmlaq_n_s32(sumi, s, sc[8 * h + 2 * k + half]);
        }
      }
    sum += f16_at(bw + offsetof(quant::BlockQ6_K, d)) * dx * static_cast<float>(vaddvq_s32(sumi) - 32 * offset);
  }
  return sum;
}

}  // namespace kernels
}  // namespace trueno::cpu::neon

#define TRUENO_QDOT_HAVE_Q8_0
#define TRUENO_QDOT_HAVE_Q4_0
#define TRUENO_QDOT_HAVE_Q4_K
#define TRUENO_QDOT_HAVE_Q5_K
#define TRUENO_QDOT_HAVE_Q6_K
#include "cpu/kernels/qdot/qdot_kernels.h"
