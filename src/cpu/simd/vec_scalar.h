// The vector API at width 1: lets the scalar reference share trueno's math functions (exp, tanh, erfc).
#pragma once
#include <cstdint>
#include <cstring>

#define TRUENO_ISA scalar

namespace trueno::cpu::scalar {

struct Vec {
  float r;
  static constexpr unsigned W = 1;
};
struct Mask {
  bool r;
};

inline Vec load(const float* p) { return {*p}; }
inline void store(float* p, Vec v) { *p = v.r; }
inline Vec set1(float x) { return {x}; }
inline Vec zero() { return {0.0f}; }
inline Vec add(Vec a, Vec b) { return {a.r + b.r}; }
inline Vec sub(Vec a, Vec b) { return {a.r - b.r}; }
inline Vec mul(Vec a, Vec b) { return {a.r * b.r}; }
inline Vec div(Vec a, Vec b) { return {a.r / b.r}; }
inline Vec fmadd(Vec a, Vec b, Vec c) { return {a.r * b.r + c.r}; }  // -ffp-contract=off: not fused
inline Vec min(Vec a, Vec b) { return {a.r < b.r ? a.r : b.r}; }
inline Vec max(Vec a, Vec b) { return {a.r > b.r ? a.r : b.r}; }
inline Vec sqrt(Vec a) { return {__builtin_sqrtf(a.r)}; }
inline Vec abs(Vec a) {
  std::uint32_t u;
  std::memcpy(&u, &a.r, 4);
  u &= 0x7fffffffu;
  float f;
  std::memcpy(&f, &u, 4);
  return {f};
}
inline Vec neg(Vec a) { return {-a.r}; }
inline Vec round_even(Vec a) {
  // Same magic-number rounding as the SIMD variants so every backend rounds identically.
  float t = a.r + 12582912.0f;  // no -ffast-math: not folded away
  return {t - 12582912.0f};
}
inline Vec pow2i(Vec n) {
  std::uint32_t u = static_cast<std::uint32_t>(static_cast<std::int32_t>(n.r) + 127) << 23;
  float f;
  std::memcpy(&f, &u, 4);
  return {f};
}
inline Mask lt(Vec a, Vec b) { return {a.r < b.r}; }
inline Mask le(Vec a, Vec b) { return {a.r <= b.r}; }
inline Mask gt(Vec a, Vec b) { return {a.r > b.r}; }
inline Mask ge(Vec a, Vec b) { return {a.r >= b.r}; }
inline Mask eq(Vec a, Vec b) { return {a.r == b.r}; }
inline Mask is_nan(Vec a) { return {a.r != a.r}; }
inline Vec select(Mask m, Vec a, Vec b) { return m.r ? a : b; }
inline Mask mask_or(Mask a, Mask b) { return {a.r || b.r}; }
inline Mask mask_and(Mask a, Mask b) { return {a.r && b.r}; }
inline unsigned mask_bits(Mask m) { return m.r ? 1u : 0u; }
inline bool any(Mask m) { return m.r; }
inline float hsum(Vec a) { return a.r; }
inline float hmax(Vec a) { return a.r; }
inline float hmin(Vec a) { return a.r; }

}  // namespace trueno::cpu::scalar
