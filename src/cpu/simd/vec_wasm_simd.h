// The vector API on WebAssembly SIMD128: 4 floats per v128_t. No FMA (relaxed SIMD's is not
// deterministic across engines): fmadd is mul then add, as on SSE2.
#pragma once
#include <wasm_simd128.h>

#define TRUENO_ISA wasm_simd

namespace trueno::cpu::wasm_simd {

struct Vec {
  v128_t r;
  static constexpr unsigned W = 4;
};
struct Mask {
  v128_t r;
};

inline Vec load(const float* p) { return {wasm_v128_load(p)}; }
inline void store(float* p, Vec v) { wasm_v128_store(p, v.r); }
inline Vec set1(float x) { return {wasm_f32x4_splat(x)}; }
inline Vec zero() { return {wasm_f32x4_const_splat(0.0f)}; }
inline Vec add(Vec a, Vec b) { return {wasm_f32x4_add(a.r, b.r)}; }
inline Vec sub(Vec a, Vec b) { return {wasm_f32x4_sub(a.r, b.r)}; }
inline Vec mul(Vec a, Vec b) { return {wasm_f32x4_mul(a.r, b.r)}; }
inline Vec div(Vec a, Vec b) { return {wasm_f32x4_div(a.r, b.r)}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {wasm_f32x4_add(wasm_f32x4_mul(a.r, b.r), c.r)}; }
// pmin(x, y) is y < x ? y : x and pmax(x, y) is x < y ? y : x: one minps/maxps on x86 engines
// (min/max, which propagate NaN, take several instructions there). Called with the operands swapped
// they are a < b ? a : b and a > b ? a : b, the scalar reference's and SSE's choice for equal values
// (+0 and -0). No NaN reaches them (vector API contract).
inline Vec min(Vec a, Vec b) { return {wasm_f32x4_pmin(b.r, a.r)}; }
inline Vec max(Vec a, Vec b) { return {wasm_f32x4_pmax(b.r, a.r)}; }
inline Vec sqrt(Vec a) { return {wasm_f32x4_sqrt(a.r)}; }
inline Vec abs(Vec a) { return {wasm_f32x4_abs(a.r)}; }
inline Vec neg(Vec a) { return {wasm_f32x4_neg(a.r)}; }
inline Vec round_even(Vec a) {
  const v128_t magic = wasm_f32x4_const_splat(12582912.0f);  // 1.5 * 2^23, as on every other ISA
  return {wasm_f32x4_sub(wasm_f32x4_add(a.r, magic), magic)};
}
inline Vec pow2i(Vec n) {
  const v128_t i = wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n.r), wasm_i32x4_const_splat(127));
  return {wasm_i32x4_shl(i, 23)};
}
inline Mask lt(Vec a, Vec b) { return {wasm_f32x4_lt(a.r, b.r)}; }
inline Mask le(Vec a, Vec b) { return {wasm_f32x4_le(a.r, b.r)}; }
inline Mask gt(Vec a, Vec b) { return {wasm_f32x4_gt(a.r, b.r)}; }
inline Mask ge(Vec a, Vec b) { return {wasm_f32x4_ge(a.r, b.r)}; }
inline Mask eq(Vec a, Vec b) { return {wasm_f32x4_eq(a.r, b.r)}; }
inline Mask is_nan(Vec a) { return {wasm_f32x4_ne(a.r, a.r)}; }
inline Vec select(Mask m, Vec a, Vec b) { return {wasm_v128_bitselect(a.r, b.r, m.r)}; }
inline Mask mask_or(Mask a, Mask b) { return {wasm_v128_or(a.r, b.r)}; }
inline Mask mask_and(Mask a, Mask b) { return {wasm_v128_and(a.r, b.r)}; }
inline unsigned mask_bits(Mask m) { return wasm_i32x4_bitmask(m.r); }
inline bool any(Mask m) { return wasm_v128_any_true(m.r); }
inline float hsum(Vec a) {
  // (0+2, 1+3) then sum: the same pairing as the x86 and NEON variants.
  const v128_t s = wasm_f32x4_add(a.r, wasm_i32x4_shuffle(a.r, a.r, 2, 3, 2, 3));
  return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}
inline float hmax(Vec a) {
  const Vec s = max(a, {wasm_i32x4_shuffle(a.r, a.r, 2, 3, 2, 3)});
  return wasm_f32x4_extract_lane(max(s, {wasm_i32x4_shuffle(s.r, s.r, 1, 1, 1, 1)}).r, 0);
}
inline float hmin(Vec a) {
  const Vec s = min(a, {wasm_i32x4_shuffle(a.r, a.r, 2, 3, 2, 3)});
  return wasm_f32x4_extract_lane(min(s, {wasm_i32x4_shuffle(s.r, s.r, 1, 1, 1, 1)}).r, 0);
}

}  // namespace trueno::cpu::wasm_simd
