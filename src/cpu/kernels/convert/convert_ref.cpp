// f16/bf16 <-> f32 scalar references by bit manipulation. Rounding: to nearest, ties to even (as
// F16C and NEON with the default FPCR). NaNs stay NaN and become quiet, keeping the top payload bits.
#include <cstring>

#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::scalar::kernels {
namespace {
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t to_half(float f) {
  std::uint32_t x = bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  std::uint32_t h;
  if (x > 0x7f800000u) {
    h = 0x7e00u | ((x >> 13) & 0x3ffu);  // NaN, quieted
  } else if (x >= 0x477ff000u) {
    h = 0x7c00u;  // >= 65520 rounds to infinity
  } else if (x < 0x38800000u) {
    // Below 2^-14: adding 0.5 (ulp 2^-24, the f16 subnormal step) rounds to nearest even for us.
    h = bits(from_bits(x) + 0.5f) - 0x3f000000u;
  } else {
    const std::uint32_t odd = (x >> 13) & 1u;
    h = (x + 0xc8000fffu + odd) >> 13;  // rebias exponent by -112, round to nearest even
  }
  return static_cast<std::uint16_t>(sign | h);
}

float from_half(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return from_bits(sign | bits(static_cast<float>(m) * 5.9604644775390625e-8f));  // m * 2^-24
  if (e == 31) return from_bits(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  return from_bits(sign | ((static_cast<std::uint32_t>(h & 0x7fffu) << 13) + (112u << 23)));
}

std::uint16_t to_bf16(float f) {
  const std::uint32_t x = bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
}  // namespace

void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = to_half(x[i]);
}
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = from_half(x[i]);
}
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = to_bf16(x[i]);
}
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = from_bits(static_cast<std::uint32_t>(x[i]) << 16);
}

}  // namespace trueno::cpu::scalar::kernels
