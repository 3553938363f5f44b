// Whether every element of an f32 array is finite, SSE2 where the target has it (every x86-64): the
// activation checks before quantization ran once per element in scalar code, twice per matvec.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace trueno::detail {

inline bool all_finite(const float* x, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  // |x| as bits is below 0x7f800000 exactly when x is finite (inf is equal, NaN above).
  const __m128i abs_mask = _mm_set1_epi32(0x7fffffff), inf = _mm_set1_epi32(0x7f800000);
  __m128i bad = _mm_setzero_si128();
  for (; i + 4 <= n; i += 4) {
    const __m128i v = _mm_and_si128(_mm_castps_si128(_mm_loadu_ps(x + i)), abs_mask);
    bad = _mm_or_si128(bad, _mm_cmpgt_epi32(v, _mm_sub_epi32(inf, _mm_set1_epi32(1))));
  }
  if (_mm_movemask_epi8(bad) != 0) return false;
#endif
  for (; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

}  // namespace trueno::detail
