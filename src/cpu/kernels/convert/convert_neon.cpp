// f16/bf16 conversions for NEON: hardware f16 conversion (FPCR rounding: nearest even), bf16 with
// integer ops; tails through a padded buffer.
#include <arm_neon.h>

#include "cpu/simd/vec_neon.h"
#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::neon {
namespace {
uint16x4_t to_half4(float32x4_t f) { return vreinterpret_u16_f16(vcvt_f16_f32(f)); }
uint16x4_t to_bf16_4(float32x4_t f) {
  const uint32x4_t x = vreinterpretq_u32_f32(f);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1));
  const uint32x4_t r = vshrq_n_u32(vaddq_u32(x, vaddq_u32(vdupq_n_u32(0x7fff), lsb)), 16);
  const uint32x4_t nan = vorrq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(0x40));
  const uint32x4_t is_num = vceqq_f32(f, f);
  return vmovn_u32(vbslq_u32(is_num, r, nan));
}
float32x4_t from_half4(uint16x4_t h) { return vcvt_f32_f16(vreinterpret_f16_u16(h)); }
float32x4_t from_bf16_4(uint16x4_t h) { return vreinterpretq_f32_u32(vshll_n_u16(h, 16)); }

template <class F>
void narrow4(const float* x, std::uint16_t* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1_u16(out + i, f(vld1q_f32(x + i)));
  if (i < n) {
    float in[4] = {};
    std::uint16_t o[4];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    vst1_u16(o, f(vld1q_f32(in)));
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}
template <class F>
void widen4(const std::uint16_t* x, float* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(out + i, f(vld1_u16(x + i)));
  if (i < n) {
    std::uint16_t in[4] = {};
    float o[4];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    vst1q_f32(o, f(vld1_u16(in)));
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}
}  // namespace

namespace kernels {
void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) { narrow4(x, out, n, to_half4); }
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen4(x, out, n, from_half4); }
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) { narrow4(x, out, n, to_bf16_4); }
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen4(x, out, n, from_bf16_4); }
}  // namespace kernels
}  // namespace trueno::cpu::neon
