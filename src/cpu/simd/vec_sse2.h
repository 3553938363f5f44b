// The vector API on SSE2: 4 floats per __m128. No FMA: fmadd is mul then add.
#pragma once
#include <emmintrin.h>

#define TRUENO_ISA sse2

namespace trueno::cpu::sse2 {

struct Vec {
  __m128 r;
  static constexpr unsigned W = 4;
};
struct Mask {
  __m128 r;
};

inline Vec load(const float* p) { return {_mm_loadu_ps(p)}; }
inline void store(float* p, Vec v) { _mm_storeu_ps(p, v.r); }
inline Vec set1(float x) { return {_mm_set1_ps(x)}; }
inline Vec zero() { return {_mm_setzero_ps()}; }
inline Vec add(Vec a, Vec b) { return {_mm_add_ps(a.r, b.r)}; }
inline Vec sub(Vec a, Vec b) { return {_mm_sub_ps(a.r, b.r)}; }
inline Vec mul(Vec a, Vec b) { return {_mm_mul_ps(a.r, b.r)}; }
inline Vec div(Vec a, Vec b) { return {_mm_div_ps(a.r, b.r)}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {_mm_add_ps(_mm_mul_ps(a.r, b.r), c.r)}; }
inline Vec min(Vec a, Vec b) { return {_mm_min_ps(a.r, b.r)}; }
inline Vec max(Vec a, Vec b) { return {_mm_max_ps(a.r, b.r)}; }
inline Vec sqrt(Vec a) { return {_mm_sqrt_ps(a.r)}; }
inline Vec abs(Vec a) { return {_mm_and_ps(a.r, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)))}; }
inline Vec neg(Vec a) { return {_mm_xor_ps(a.r, _mm_set1_ps(-0.0f))}; }
inline Vec round_even(Vec a) {
  const __m128 magic = _mm_set1_ps(12582912.0f);  // 1.5 * 2^23
  return {_mm_sub_ps(_mm_add_ps(a.r, magic), magic)};
}
inline __m128i pow2i_bits(__m128 n) {
  return _mm_slli_epi32(_mm_add_epi32(_mm_cvttps_epi32(n), _mm_set1_epi32(127)), 23);
}
inline Vec pow2i(Vec n) { return {_mm_castsi128_ps(pow2i_bits(n.r))}; }
inline Mask lt(Vec a, Vec b) { return {_mm_cmplt_ps(a.r, b.r)}; }
inline Mask le(Vec a, Vec b) { return {_mm_cmple_ps(a.r, b.r)}; }
inline Mask gt(Vec a, Vec b) { return {_mm_cmpgt_ps(a.r, b.r)}; }
inline Mask ge(Vec a, Vec b) { return {_mm_cmpge_ps(a.r, b.r)}; }
inline Mask eq(Vec a, Vec b) { return {_mm_cmpeq_ps(a.r, b.r)}; }
inline Mask is_nan(Vec a) { return {_mm_cmpunord_ps(a.r, a.r)}; }
inline Vec select(Mask m, Vec a, Vec b) {
  return {_mm_or_ps(_mm_and_ps(m.r, a.r), _mm_andnot_ps(m.r, b.r))};
}
inline Mask mask_or(Mask a, Mask b) { return {_mm_or_ps(a.r, b.r)}; }
inline Mask mask_and(Mask a, Mask b) { return {_mm_and_ps(a.r, b.r)}; }
inline unsigned mask_bits(Mask m) { return static_cast<unsigned>(_mm_movemask_ps(m.r)); }
inline bool any(Mask m) { return _mm_movemask_ps(m.r) != 0; }
inline float hsum(Vec a) {
  __m128 s = _mm_add_ps(a.r, _mm_movehl_ps(a.r, a.r));      // lanes (0+2, 1+3)
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 1, 1)));
  return _mm_cvtss_f32(s);
}
inline float hmax(Vec a) {
  __m128 s = _mm_max_ps(a.r, _mm_movehl_ps(a.r, a.r));
  s = _mm_max_ss(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 1, 1)));
  return _mm_cvtss_f32(s);
}
inline float hmin(Vec a) {
  __m128 s = _mm_min_ps(a.r, _mm_movehl_ps(a.r, a.r));
  s = _mm_min_ss(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 1, 1)));
  return _mm_cvtss_f32(s);
}

}  // namespace trueno::cpu::sse2
