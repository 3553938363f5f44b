// Quantized block dot products for AVX2, hand-written: u8 x i8 products with vpmaddubsw (the
// unsigned operand is the weight's 4/5/6-bit level, or |w| with the sign moved onto x), int16 pairs
// scaled and widened with vpmaddwd, an exact integer sum per block, then the reference's float steps.
#include <immintrin.h>

#include <cstddef>
#include <type_traits>

#include "cpu/simd/vec_avx2.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdot/qdot_impl.h"

namespace trueno::cpu::avx2 {
namespace {

__m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Exact horizontal sum of 8 int32 lanes. Each block's integer sum is reduced exactly and then goes
// through the same float operations as the scalar reference, so the results are bit-identical to it
// (summing float lanes instead would round partial sums that can be far larger than the total).
int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// sum of signed bytes a[i] * b[i], as 8 int32 lanes.
__m256i dot_i8(__m256i a, __m256i b) {
  const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// The eight 6-bit scales and mins of a Q4_K/Q5_K block.
void k_scales(const unsigned char* packed, int* sc, int* m) {
  std::uint8_t scales[12];
  std::memcpy(scales, packed, 12);
  for (int j = 0; j < 8; ++j) quant::k_scale_min(scales, j, &sc[j], &m[j]);
}

template <bool kFifthBit>
float dot_k45(const void* w, const void* x, std::size_t nb) {
  using Block = std::conditional_t<kFifthBit, quant::BlockQ5_K, quant::BlockQ4_K>;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    // Byte pointers and offsetof, not member access: blocks may sit at any address.
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(Block);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_K);
    std::uint16_t dbits, dminbits;
    std::memcpy(&dbits, bw + offsetof(Block, d), 2);
    std::memcpy(&dminbits, bw + offsetof(Block, dmin), 2);
    float dx;
    std::memcpy(&dx, bx + offsetof(quant::BlockQ8_K, d), 4);
    int sc[8], m[8];
    k_scales(bw + offsetof(Block, scales), sc, m);
    std::int16_t bsums[16];
    std::memcpy(bsums, bx + offsetof(quant::BlockQ8_K, bsums), sizeof bsums);
    const unsigned char* qs = bw + offsetof(Block, qs);
    const unsigned char* xqs = bx + offsetof(quant::BlockQ8_K, qs);
    int summ = 0;
    for (int j = 0; j < 8; ++j) summ += m[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    __m256i hbits = kFifthBit ? load32(bw + offsetof(quant::BlockQ5_K, qh)) : _mm256_setzero_si256();
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load32(qs + 32 * c);
      __m256i q0 = _mm256_and_si256(q, low4), q1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      if constexpr (kFifthBit) {
        const __m256i one = _mm256_set1_epi8(1);
        q0 = _mm256_add_epi8(q0, _mm256_slli_epi16(_mm256_and_si256(hbits, one), 4));
        q1 = _mm256_add_epi8(q1, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 1), one), 4));
        hbits = _mm256_srli_epi16(hbits, 2);
      }
      const __m256i p0 = _mm256_maddubs_epi16(q0, load32(xqs + 64 * c));
      const __m256i p1 = _mm256_maddubs_epi16(q1, load32(xqs + 64 * c + 32));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p0, _mm256_set1_epi16(static_cast<short>(sc[2 * c]))));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p1, _mm256_set1_epi16(static_cast<short>(sc[2 * c + 1]))));
    }
    const float d = detail::f16_bits_to_f32(dbits) * dx, dmin = detail::f16_bits_to_f32(dminbits) * dx;
    sum += d * static_cast<float>(hsum_i32(sumi)) - dmin * static_cast<float>(summ);
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
    std::uint16_t dw, dx;
    std::memcpy(&dw, bw, 2);
    std::memcpy(&dx, bx, 2);
    sum += detail::f16_bits_to_f32(dw) * detail::f16_bits_to_f32(dx) *
           static_cast<float>(hsum_i32(dot_i8(load32(bw + 2), load32(bx + 2))));
  }
  return sum;
}

float dot_q4_0_q8_0(const void* w, const void* x, std::size_t nb) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(quant::BlockQ4_0);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_0);
    std::uint16_t dw, dx;
    std::memcpy(&dw, bw, 2);
    std::memcpy(&dx, bx, 2);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bw + 2));
    // low nibbles are elements 0..15, high nibbles 16..31
    const __m256i nib = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    const __m256i q4 = _mm256_sub_epi8(_mm256_and_si256(nib, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
    sum += detail::f16_bits_to_f32(dw) * detail::f16_bits_to_f32(dx) * static_cast<float>(hsum_i32(dot_i8(q4, load32(bx + 2))));
  }
  return sum;
}

float dot_q4_k_q8_k(const void* w, const void* x, std::size_t nb) { return dot_k45<false>(w, x, nb); }
float dot_q5_k_q8_k(const void* w, const void* x, std::size_t nb) { return dot_k45<true>(w, x, nb); }

float dot_q6_k_q8_k(const void* w, const void* x, std::size_t nb) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
  float sum = 0.0f;
  for (std::size_t i = 0; i < nb; ++i) {
    const auto* bw = static_cast<const unsigned char*>(w) + i * sizeof(quant::BlockQ6_K);
    const auto* bx = static_cast<const unsigned char*>(x) + i * sizeof(quant::BlockQ8_K);
    std::uint16_t dbits;
    std::memcpy(&dbits, bw + offsetof(quant::BlockQ6_K, d), 2);
    float dx;
    std::memcpy(&dx, bx + offsetof(quant::BlockQ8_K, d), 4);
    std::int8_t sc[16];
    std::memcpy(sc, bw + offsetof(quant::BlockQ6_K, scales), 16);
    std::int16_t bsums[16];
    std::memcpy(bsums, bx + offsetof(quant::BlockQ8_K, bsums), sizeof bsums);
    const unsigned char* ql = bw + offsetof(quant::BlockQ6_K, ql);
    const unsigned char* qhp = bw + offsetof(quant::BlockQ6_K, qh);
    const unsigned char* xqs = bx + offsetof(quant::BlockQ8_K, qs);
    int offset = 0;  // levels are stored +32: subtract 32 * sum_g sc_g * bsum_g
    for (int g = 0; g < 16; ++g) offset += sc[g] * bsums[g];
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load32(ql + 64 * h), ql1 = load32(ql + 64 * h + 32);
      const __m256i qh = load32(qhp + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, three), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), three), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), three), 4))};
      for (int k = 0; k < 4; ++k) {
        // 32 elements = sub-blocks 8h + 2k and 8h + 2k + 1 (16 each): int16 lanes 0-7 and 8-15.
        const __m256i p = _mm256_maddubs_epi16(q[k], load32(xqs + 128 * h + 32 * k));
        const __m256i s = _mm256_set_m128i(_mm_set1_epi16(sc[8 * h + 2 * k + 1]), _mm_set1_epi16(sc[8 * h + 2 * k]));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, s));
      }
    }
    sum += detail::f16_bits_to_f32(dbits) * dx * static_cast<float>(hsum_i32(sumi) - 32 * offset);
  }
  return sum;
}

}  // namespace kernels
}  // namespace trueno::cpu::avx2
