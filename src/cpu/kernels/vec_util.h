// Tail handling and element-wise mapping over the vector API, shared by the kernel families.
// Include after a vec_<isa>.h.
#pragma once
#include <cstddef>

namespace trueno::cpu::TRUENO_ISA {

inline void copy_n(float* dst, const float* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
}

// A partial vector: the first n lanes from p, the rest pad.
inline Vec load_pad(const float* p, std::size_t n, float pad) {
  float buf[Vec::W];
  for (std::size_t i = 0; i < Vec::W; ++i) buf[i] = i < n ? p[i] : pad;
  return load(buf);
}

inline Vec load_tail(const float* p, std::size_t n) {
  float buf[Vec::W] = {};
  copy_n(buf, p, n);
  return load(buf);
}

inline void store_tail(float* p, Vec v, std::size_t n) {
  float buf[Vec::W];
  store(buf, v);
  copy_n(p, buf, n);
}

template <class F>
inline void map1(const float* x, float* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W) store(out + i, f(load(x + i)));
  if (i < n) store_tail(out + i, f(load_tail(x + i, n - i)), n - i);
}

template <class F>
inline void map2(const float* a, const float* b, float* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + Vec::W <= n; i += Vec::W) store(out + i, f(load(a + i), load(b + i)));
  if (i < n) store_tail(out + i, f(load_tail(a + i, n - i), load_tail(b + i, n - i)), n - i);
}

}  // namespace trueno::cpu::TRUENO_ISA
