// f16/bf16 conversions for WebAssembly SIMD128: integer bit manipulation, 4 lanes at a time (no
// hardware half conversion in SIMD128). The algorithm of convert_sse2_impl.h and convert_ref.cpp.
#include <cstddef>
#include <cstdint>

#include "cpu/simd/vec_wasm_simd.h"
#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::wasm_simd {
namespace {

v128_t sel(v128_t m, v128_t a, v128_t b) { return wasm_v128_bitselect(a, b, m); }
v128_t c32(std::uint32_t v) { return wasm_i32x4_splat(static_cast<std::int32_t>(v)); }

// 4 floats -> 4 halves in the low 16 bits of each 32-bit lane.
v128_t to_half4(v128_t f) {
  v128_t x = f;
  const v128_t sign = wasm_v128_and(wasm_u32x4_shr(x, 16), c32(0x8000));
  x = wasm_v128_and(x, c32(0x7fffffff));
  const v128_t sub = wasm_i32x4_sub(wasm_f32x4_add(x, wasm_f32x4_splat(0.5f)), c32(0x3f000000));
  const v128_t odd = wasm_v128_and(wasm_u32x4_shr(x, 13), c32(1));
  const v128_t norm = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_add(x, c32(0xc8000fff)), odd), 13);
  const v128_t nan = wasm_v128_or(c32(0x7e00), wasm_v128_and(wasm_u32x4_shr(x, 13), c32(0x3ff)));
  v128_t h = sel(wasm_i32x4_gt(c32(0x38800000), x), sub, norm);
  h = sel(wasm_i32x4_gt(x, c32(0x477fefff)), c32(0x7c00), h);
  h = sel(wasm_i32x4_gt(x, c32(0x7f800000)), nan, h);
  return wasm_v128_or(h, sign);
}

// 4 halves (zero-extended to 32-bit lanes) -> 4 floats.
v128_t from_half4(v128_t h) {
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(h, c32(0x8000)), 16);
  const v128_t e = wasm_v128_and(h, c32(0x7c00)), m = wasm_v128_and(h, c32(0x3ff));
  const v128_t norm = wasm_i32x4_add(wasm_i32x4_shl(wasm_v128_and(h, c32(0x7fff)), 13), c32(112u << 23));
  const v128_t sub = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(m), wasm_f32x4_splat(5.9604644775390625e-8f));
  const v128_t zero = wasm_i32x4_const_splat(0);
  const v128_t quiet = wasm_v128_andnot(c32(0x400000), wasm_i32x4_eq(m, zero));
  const v128_t special = wasm_v128_or(wasm_v128_or(c32(0x7f800000), wasm_i32x4_shl(m, 13)), quiet);
  v128_t x = sel(wasm_i32x4_eq(e, zero), sub, norm);
  x = sel(wasm_i32x4_eq(e, c32(0x7c00)), special, x);
  return wasm_v128_or(x, sign);
}

v128_t to_bf16_4(v128_t f) {
  const v128_t lsb = wasm_v128_and(wasm_u32x4_shr(f, 16), c32(1));
  const v128_t r = wasm_u32x4_shr(wasm_i32x4_add(f, wasm_i32x4_add(c32(0x7fff), lsb)), 16);
  const v128_t nan = wasm_v128_or(wasm_u32x4_shr(f, 16), c32(0x40));
  return sel(wasm_f32x4_ne(f, f), nan, r);
}

// The low 16 bits of each 32-bit lane of a, then of b -> 8 uint16.
v128_t pack_low16(v128_t a, v128_t b) { return wasm_i16x8_shuffle(a, b, 0, 2, 4, 6, 8, 10, 12, 14); }

template <class To4>
void narrow8(const float* x, std::uint16_t* out, std::size_t n, To4 to4) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) wasm_v128_store(out + i, pack_low16(to4(wasm_v128_load(x + i)), to4(wasm_v128_load(x + i + 4))));
  if (i < n) {
    float in[8] = {};
    std::uint16_t o[8];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    wasm_v128_store(o, pack_low16(to4(wasm_v128_load(in)), to4(wasm_v128_load(in + 4))));
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}

template <class From8>
void widen8(const std::uint16_t* x, float* out, std::size_t n, From8 from8) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) from8(wasm_v128_load(x + i), out + i);
  if (i < n) {
    std::uint16_t in[8] = {};
    float o[8];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    from8(wasm_v128_load(in), o);
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}

void half8_to_f32(v128_t h, float* out) {
  wasm_v128_store(out, from_half4(wasm_u32x4_extend_low_u16x8(h)));
  wasm_v128_store(out + 4, from_half4(wasm_u32x4_extend_high_u16x8(h)));
}

void bf16x8_to_f32(v128_t h, float* out) {
  wasm_v128_store(out, wasm_i32x4_shl(wasm_u32x4_extend_low_u16x8(h), 16));
  wasm_v128_store(out + 4, wasm_i32x4_shl(wasm_u32x4_extend_high_u16x8(h), 16));
}

}  // namespace

namespace kernels {
void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) { narrow8(x, out, n, to_half4); }
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen8(x, out, n, half8_to_f32); }
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) { narrow8(x, out, n, to_bf16_4); }
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen8(x, out, n, bf16x8_to_f32); }
}  // namespace kernels
}  // namespace trueno::cpu::wasm_simd
