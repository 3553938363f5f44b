// The CPU reference of testdata/kernels.cu's mixed_ops (the same C++), shared by decy_vulkan_test.cpp (GLSL)
// and decy_wgsl_test.cpp (WGSL). x: [n]; y: [n], z: [n] out.
#pragma once
#include <cstdint>
#include <vector>

namespace decy::test {

inline void mixed_ops_ref(const std::vector<std::uint32_t>& x, std::vector<std::uint32_t>& y, std::vector<std::int32_t>& z) {
  const int n = static_cast<int>(x.size());
  y.assign(n, 0), z.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    std::uint32_t v = x[i];
    int steps = 0;
    do {
      v = v * 1664525u + 1013904223u;
      ++steps;
    } while ((v & 7u) != 0u && steps < 20);
    const std::uint32_t nv = 0u - v;
    const int sh = i % 31;
    y[i] = (x[i] ^ (nv << sh)) + (nv >> (31 - sh));  // mix_bits(row, -v, i % 31), p[threadIdx.x % 4] = x[i]
    int s = static_cast<int>(x[i] >> 1);
    s = s % 2 == 0 ? -s : s;
    s >>= 8;
    z[i] = s * steps;
  }
}

// Each 32-bit result as its two 16-bit halves, exact floats (the contracts compare floats).
inline std::vector<float> halves(const std::vector<std::uint32_t>& y, const std::vector<std::int32_t>& z) {
  std::vector<float> out;
  for (std::size_t i = 0; i < y.size(); ++i)
    for (const std::uint32_t w : {y[i], static_cast<std::uint32_t>(z[i])})
      out.push_back(static_cast<float>(w >> 16)), out.push_back(static_cast<float>(w & 0xffffu));
  return out;
}

}  // namespace decy::test
