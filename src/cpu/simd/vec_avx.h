// The vector API on AVX: 8 floats per __m256. No FMA and no 256-bit integer ops (those come with AVX2).
#pragma once
#include <immintrin.h>

#define TRUENO_ISA avx

namespace trueno::cpu::avx {

struct Vec {
  __m256 r;
  static constexpr unsigned W = 8;
};
struct Mask {
  __m256 r;
};

inline Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
inline void store(float* p, Vec v) { _mm256_storeu_ps(p, v.r); }
inline Vec set1(float x) { return {_mm256_set1_ps(x)}; }
inline Vec zero() { return {_mm256_setzero_ps()}; }
inline Vec add(Vec a, Vec b) { return {_mm256_add_ps(a.r, b.r)}; }
inline Vec sub(Vec a, Vec b) { return {_mm256_sub_ps(a.r, b.r)}; }
inline Vec mul(Vec a, Vec b) { return {_mm256_mul_ps(a.r, b.r)}; }
inline Vec div(Vec a, Vec b) { return {_mm256_div_ps(a.r, b.r)}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {_mm256_add_ps(_mm256_mul_ps(a.r, b.r), c.r)}; }
inline Vec min(Vec a, Vec b) { return {_mm256_min_ps(a.r, b.r)}; }
inline Vec max(Vec a, Vec b) { return {_mm256_max_ps(a.r, b.r)}; }
inline Vec sqrt(Vec a) { return {_mm256_sqrt_ps(a.r)}; }
inline Vec abs(Vec a) { return {_mm256_and_ps(a.r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)))}; }
inline Vec neg(Vec a) { return {_mm256_xor_ps(a.r, _mm256_set1_ps(-0.0f))}; }
inline Vec round_even(Vec a) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23
  return {_mm256_sub_ps(_mm256_add_ps(a.r, magic), magic)};
}
inline Vec pow2i(Vec n) {
  // Integer shifts on 128-bit halves: AVX has no 256-bit integer instructions.
  __m256i i = _mm256_cvttps_epi32(n.r);
  __m128i lo = _mm256_castsi256_si128(i), hi = _mm256_extractf128_si256(i, 1);
  const __m128i bias = _mm_set1_epi32(127);
  lo = _mm_slli_epi32(_mm_add_epi32(lo, bias), 23);
  hi = _mm_slli_epi32(_mm_add_epi32(hi, bias), 23);
  return {_mm256_castsi256_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(lo), hi, 1))};
}
inline Mask lt(Vec a, Vec b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_LT_OQ)}; }
inline Mask le(Vec a, Vec b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_LE_OQ)}; }
inline Mask gt(Vec a, Vec b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_GT_OQ)}; }
inline Mask ge(Vec a, Vec b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_GE_OQ)}; }
inline Mask eq(Vec a, Vec b) { return {_mm256_cmp_ps(a.r, b.r, _CMP_EQ_OQ)}; }
inline Mask is_nan(Vec a) { return {_mm256_cmp_ps(a.r, a.r, _CMP_UNORD_Q)}; }
// Not _mm256_blendv_ps: GCC 12 rewrites it as a sign test on 256-bit integers, which AVX1 lacks,
// and splits it into per-lane branches (4x slower sums, measured). Bitwise ops stay vectorized.
inline Vec select(Mask m, Vec a, Vec b) {
  return {_mm256_or_ps(_mm256_and_ps(m.r, a.r), _mm256_andnot_ps(m.r, b.r))};
}
inline Mask mask_or(Mask a, Mask b) { return {_mm256_or_ps(a.r, b.r)}; }
inline Mask mask_and(Mask a, Mask b) { return {_mm256_and_ps(a.r, b.r)}; }
inline unsigned mask_bits(Mask m) { return static_cast<unsigned>(_mm256_movemask_ps(m.r)); }
inline bool any(Mask m) { return _mm256_movemask_ps(m.r) != 0; }
inline __m128 fold(__m256 a) { return _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)); }
inline float hsum(Vec a) {
  __m128 s = fold(a.r);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
inline float hmax(Vec a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.r), _mm256_extractf128_ps(a.r, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
inline float hmin(Vec a) {
  __m128 s = _mm_min_ps(_mm256_castps256_ps128(a.r), _mm256_extractf128_ps(a.r, 1));
  s = _mm_min_ps(s, _mm_movehl_ps(s, s));
  s = _mm_min_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace trueno::cpu::avx
