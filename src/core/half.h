// Scalar f16/bf16 <-> f32 by bit manipulation (round to nearest even; NaN kept, quieted). Shared by
// the conversion kernels' scalar reference and the quantized block formats (f16 scales).
#pragma once
#include <cstdint>
#include <cstring>

namespace trueno::detail {

static inline std::uint32_t f32_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

static inline float f32_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

static inline std::uint16_t f32_to_f16_bits(float f) {
  std::uint32_t x = f32_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  std::uint32_t h;
  if (x > 0x7f800000u) {
    h = 0x7e00u | ((x >> 13) & 0x3ffu);  // NaN, quieted
  } else if (x >= 0x477ff000u) {
    h = 0x7c00u;  // >= 65520 rounds to infinity
  } else if (x < 0x38800000u) {
    // Below 2^-14: adding 0.5 (ulp 2^-24, the f16 subnormal step) rounds to nearest even for us.
    h = f32_bits(f32_from_bits(x) + 0.5f) - 0x3f000000u;
  } else {
    const std::uint32_t odd = (x >> 13) & 1u;
    h = (x + 0xc8000fffu + odd) >> 13;  // rebias exponent by -112, round to nearest even
  }
  return static_cast<std::uint16_t>(sign | h);
}

static inline float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return f32_from_bits(sign | f32_bits(static_cast<float>(m) * 5.9604644775390625e-8f));  // m * 2^-24
  if (e == 31) return f32_from_bits(sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u));
  return f32_from_bits(sign | ((static_cast<std::uint32_t>(h & 0x7fffu) << 13) + (112u << 23)));
}

static inline std::uint16_t f32_to_bf16_bits(float f) {
  const std::uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float bf16_bits_to_f32(std::uint16_t h) { return f32_from_bits(static_cast<std::uint32_t>(h) << 16); }

}  // namespace trueno::detail
