// The vector API on AArch64 NEON: 4 floats per float32x4_t, fused multiply-add always present.
#pragma once
#include <arm_neon.h>

#define TRUENO_ISA neon

namespace trueno::cpu::neon {

struct Vec {
  float32x4_t r;
  static constexpr unsigned W = 4;
};
struct Mask {
  uint32x4_t r;
};

inline Vec load(const float* p) { return {vld1q_f32(p)}; }
inline void store(float* p, Vec v) { vst1q_f32(p, v.r); }
inline Vec set1(float x) { return {vdupq_n_f32(x)}; }
inline Vec zero() { return {vdupq_n_f32(0.0f)}; }
inline Vec add(Vec a, Vec b) { return {vaddq_f32(a.r, b.r)}; }
inline Vec sub(Vec a, Vec b) { return {vsubq_f32(a.r, b.r)}; }
inline Vec mul(Vec a, Vec b) { return {vmulq_f32(a.r, b.r)}; }
inline Vec div(Vec a, Vec b) { return {vdivq_f32(a.r, b.r)}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {vfmaq_f32(c.r, a.r, b.r)}; }
inline Vec min(Vec a, Vec b) { return {vminq_f32(a.r, b.r)}; }
inline Vec max(Vec a, Vec b) { return {vmaxq_f32(a.r, b.r)}; }
inline Vec sqrt(Vec a) { return {vsqrtq_f32(a.r)}; }
inline Vec abs(Vec a) { return {vabsq_f32(a.r)}; }
inline Vec neg(Vec a) { return {vnegq_f32(a.r)}; }
inline Vec round_even(Vec a) {
  const float32x4_t magic = vdupq_n_f32(12582912.0f);  // 1.5 * 2^23, as on every other ISA
  return {vsubq_f32(vaddq_f32(a.r, magic), magic)};
}
inline Vec pow2i(Vec n) {
  int32x4_t i = vaddq_s32(vcvtq_s32_f32(n.r), vdupq_n_s32(127));
  return {vreinterpretq_f32_s32(vshlq_n_s32(i, 23))};
}
inline Mask lt(Vec a, Vec b) { return {vcltq_f32(a.r, b.r)}; }
inline Mask le(Vec a, Vec b) { return {vcleq_f32(a.r, b.r)}; }
inline Mask gt(Vec a, Vec b) { return {vcgtq_f32(a.r, b.r)}; }
inline Mask ge(Vec a, Vec b) { return {vcgeq_f32(a.r, b.r)}; }
inline Mask eq(Vec a, Vec b) { return {vceqq_f32(a.r, b.r)}; }
inline Mask is_nan(Vec a) { return {vmvnq_u32(vceqq_f32(a.r, a.r))}; }
inline Vec select(Mask m, Vec a, Vec b) { return {vbslq_f32(m.r, a.r, b.r)}; }
inline Mask mask_or(Mask a, Mask b) { return {vorrq_u32(a.r, b.r)}; }
inline Mask mask_and(Mask a, Mask b) { return {vandq_u32(a.r, b.r)}; }
inline unsigned mask_bits(Mask m) {
  const uint32x4_t bit = {1, 2, 4, 8};
  return vaddvq_u32(vandq_u32(m.r, bit));
}
inline bool any(Mask m) { return vmaxvq_u32(m.r) != 0; }
inline float hsum(Vec a) {
  // (0+2, 1+3) then sum: the same pairing as the x86 variants.
  float32x2_t s = vadd_f32(vget_low_f32(a.r), vget_high_f32(a.r));
  return vget_lane_f32(s, 0) + vget_lane_f32(s, 1);
}
inline float hmax(Vec a) { return vmaxvq_f32(a.r); }
inline float hmin(Vec a) { return vminvq_f32(a.r); }

}  // namespace trueno::cpu::neon
