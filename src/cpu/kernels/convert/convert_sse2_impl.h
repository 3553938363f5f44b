// f16/bf16 conversions with SSE2 integer operations, 4 lanes at a time: the bodies of the SSE2 and AVX
// tiers (no F16C there) and the bf16 path of the AVX2 tier. Same algorithm as convert_ref.cpp.
#pragma once
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>

namespace trueno::cpu::TRUENO_ISA {

inline __m128i sel(__m128i m, __m128i a, __m128i b) { return _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b)); }
inline __m128i c32(std::uint32_t v) { return _mm_set1_epi32(static_cast<int>(v)); }

// 4 floats -> 4 halves in the low 16 bits of each 32-bit lane.
inline __m128i to_half4(__m128 f) {
  __m128i x = _mm_castps_si128(f);
  const __m128i sign = _mm_and_si128(_mm_srli_epi32(x, 16), c32(0x8000));
  x = _mm_and_si128(x, c32(0x7fffffff));
  const __m128i sub = _mm_sub_epi32(_mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(x), _mm_set1_ps(0.5f))), c32(0x3f000000));
  const __m128i odd = _mm_and_si128(_mm_srli_epi32(x, 13), c32(1));
  const __m128i norm = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(x, c32(0xc8000fff)), odd), 13);
  const __m128i nan = _mm_or_si128(c32(0x7e00), _mm_and_si128(_mm_srli_epi32(x, 13), c32(0x3ff)));
  __m128i h = sel(_mm_cmpgt_epi32(c32(0x38800000), x), sub, norm);
  h = sel(_mm_cmpgt_epi32(x, c32(0x477fefff)), c32(0x7c00), h);
  h = sel(_mm_cmpgt_epi32(x, c32(0x7f800000)), nan, h);
  return _mm_or_si128(h, sign);
}

// 4 halves (zero-extended to 32-bit lanes) -> 4 floats.
inline __m128 from_half4(__m128i h) {
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, c32(0x8000)), 16);
  const __m128i e = _mm_and_si128(h, c32(0x7c00)), m = _mm_and_si128(h, c32(0x3ff));
  const __m128i norm = _mm_add_epi32(_mm_slli_epi32(_mm_and_si128(h, c32(0x7fff)), 13), c32(112u << 23));
  const __m128i sub = _mm_castps_si128(_mm_mul_ps(_mm_cvtepi32_ps(m), _mm_set1_ps(5.9604644775390625e-8f)));
  const __m128i quiet = _mm_andnot_si128(_mm_cmpeq_epi32(m, _mm_setzero_si128()), c32(0x400000));
  const __m128i special = _mm_or_si128(_mm_or_si128(c32(0x7f800000), _mm_slli_epi32(m, 13)), quiet);
  __m128i x = sel(_mm_cmpeq_epi32(e, _mm_setzero_si128()), sub, norm);
  x = sel(_mm_cmpeq_epi32(e, c32(0x7c00)), special, x);
  return _mm_castsi128_ps(_mm_or_si128(x, sign));
}

inline __m128i to_bf16_4(__m128 f) {
  const __m128i x = _mm_castps_si128(f);
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(x, 16), c32(1));
  const __m128i r = _mm_srli_epi32(_mm_add_epi32(x, _mm_add_epi32(c32(0x7fff), lsb)), 16);
  const __m128i nan = _mm_or_si128(_mm_srli_epi32(x, 16), c32(0x40));
  return sel(_mm_castps_si128(_mm_cmpunord_ps(f, f)), nan, r);
}

// Low 16 bits of each 32-bit lane of a and b -> 8 uint16 (packs saturates, so sign-extend first).
inline __m128i pack_low16(__m128i a, __m128i b) {
  return _mm_packs_epi32(_mm_srai_epi32(_mm_slli_epi32(a, 16), 16), _mm_srai_epi32(_mm_slli_epi32(b, 16), 16));
}

template <class To4>
inline void narrow8(const float* x, std::uint16_t* out, std::size_t n, To4 to4) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), pack_low16(to4(_mm_loadu_ps(x + i)), to4(_mm_loadu_ps(x + i + 4))));
  if (i < n) {
    float in[8] = {};
    std::uint16_t o[8];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), pack_low16(to4(_mm_loadu_ps(in)), to4(_mm_loadu_ps(in + 4))));
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}

template <class From8>
inline void widen8(const std::uint16_t* x, float* out, std::size_t n, From8 from8) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) from8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)), out + i);
  if (i < n) {
    std::uint16_t in[8] = {};
    float o[8];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    from8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)), o);
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}

inline void half8_to_f32(__m128i h, float* out) {
  const __m128i z = _mm_setzero_si128();
  _mm_storeu_ps(out, from_half4(_mm_unpacklo_epi16(h, z)));
  _mm_storeu_ps(out + 4, from_half4(_mm_unpackhi_epi16(h, z)));
}

inline void bf16x8_to_f32(__m128i h, float* out) {
  const __m128i z = _mm_setzero_si128();
  _mm_storeu_ps(out, _mm_castsi128_ps(_mm_unpacklo_epi16(z, h)));
  _mm_storeu_ps(out + 4, _mm_castsi128_ps(_mm_unpackhi_epi16(z, h)));
}

}  // namespace trueno::cpu::TRUENO_ISA
