// The vector API on AVX-512 (F+BW+DQ+VL): 16 floats per __m512, masks in k registers.
#pragma once
#include <immintrin.h>

#define TRUENO_ISA avx512

namespace trueno::cpu::avx512 {

struct Vec {
  __m512 r;
  static constexpr unsigned W = 16;
};
struct Mask {
  __mmask16 r;
};

inline Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline void store(float* p, Vec v) { _mm512_storeu_ps(p, v.r); }
inline Vec set1(float x) { return {_mm512_set1_ps(x)}; }
inline Vec zero() { return {_mm512_setzero_ps()}; }
inline Vec add(Vec a, Vec b) { return {_mm512_add_ps(a.r, b.r)}; }
inline Vec sub(Vec a, Vec b) { return {_mm512_sub_ps(a.r, b.r)}; }
inline Vec mul(Vec a, Vec b) { return {_mm512_mul_ps(a.r, b.r)}; }
inline Vec div(Vec a, Vec b) { return {_mm512_div_ps(a.r, b.r)}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.r, b.r, c.r)}; }
inline Vec min(Vec a, Vec b) { return {_mm512_min_ps(a.r, b.r)}; }
inline Vec max(Vec a, Vec b) { return {_mm512_max_ps(a.r, b.r)}; }
inline Vec sqrt(Vec a) { return {_mm512_sqrt_ps(a.r)}; }
inline Vec abs(Vec a) { return {_mm512_abs_ps(a.r)}; }
inline Vec neg(Vec a) { return {_mm512_xor_ps(a.r, _mm512_set1_ps(-0.0f))}; }
inline Vec round_even(Vec a) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23
  return {_mm512_sub_ps(_mm512_add_ps(a.r, magic), magic)};
}
inline Vec pow2i(Vec n) {
  __m512i i = _mm512_add_epi32(_mm512_cvttps_epi32(n.r), _mm512_set1_epi32(127));
  return {_mm512_castsi512_ps(_mm512_slli_epi32(i, 23))};
}
inline Mask lt(Vec a, Vec b) { return {_mm512_cmp_ps_mask(a.r, b.r, _CMP_LT_OQ)}; }
inline Mask le(Vec a, Vec b) { return {_mm512_cmp_ps_mask(a.r, b.r, _CMP_LE_OQ)}; }
inline Mask gt(Vec a, Vec b) { return {_mm512_cmp_ps_mask(a.r, b.r, _CMP_GT_OQ)}; }
inline Mask ge(Vec a, Vec b) { return {_mm512_cmp_ps_mask(a.r, b.r, _CMP_GE_OQ)}; }
inline Mask eq(Vec a, Vec b) { return {_mm512_cmp_ps_mask(a.r, b.r, _CMP_EQ_OQ)}; }
inline Mask is_nan(Vec a) { return {_mm512_cmp_ps_mask(a.r, a.r, _CMP_UNORD_Q)}; }
inline Vec select(Mask m, Vec a, Vec b) { return {_mm512_mask_blend_ps(m.r, b.r, a.r)}; }
inline Mask mask_or(Mask a, Mask b) { return {static_cast<__mmask16>(a.r | b.r)}; }
inline Mask mask_and(Mask a, Mask b) { return {static_cast<__mmask16>(a.r & b.r)}; }
inline unsigned mask_bits(Mask m) { return m.r; }
inline bool any(Mask m) { return m.r != 0; }
inline __m128 fold4(__m512 a, bool is_max, bool is_min) {
  __m256 lo = _mm512_castps512_ps256(a);
  __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1));
  __m256 h = is_max ? _mm256_max_ps(lo, hi) : is_min ? _mm256_min_ps(lo, hi) : _mm256_add_ps(lo, hi);
  __m128 l4 = _mm256_castps256_ps128(h), h4 = _mm256_extractf128_ps(h, 1);
  return is_max ? _mm_max_ps(l4, h4) : is_min ? _mm_min_ps(l4, h4) : _mm_add_ps(l4, h4);
}
inline float hsum(Vec a) {
  __m128 s = fold4(a.r, false, false);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
inline float hmax(Vec a) {
  __m128 s = fold4(a.r, true, false);
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
inline float hmin(Vec a) {
  __m128 s = fold4(a.r, false, true);
  s = _mm_min_ps(s, _mm_movehl_ps(s, s));
  s = _mm_min_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace trueno::cpu::avx512
