// f16/bf16 conversions for AVX-512: 16 lanes, hardware f16 conversion, bf16 with 512-bit integer ops.
#include <immintrin.h>

#include "cpu/simd/vec_avx512.h"
#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::avx512 {
namespace {
__mmask16 tail_mask(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

__m256i to_half16(__m512 f) { return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
__m256i to_bf16_16(__m512 f) {
  const __m512i x = _mm512_castps_si512(f);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  const __m512i nan = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q), nan);
  return _mm512_cvtepi32_epi16(r);
}
__m512 from_half16(__m256i h) { return _mm512_cvtph_ps(h); }
__m512 from_bf16_16(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

template <class F>
void narrow16(const float* x, std::uint16_t* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm256_mask_storeu_epi16(out + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}
template <class F>
void widen16(const std::uint16_t* x, float* out, std::size_t n, F f) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, f(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m, f(_mm256_maskz_loadu_epi16(m, x + i)));
  }
}
}  // namespace

namespace kernels {
void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) { narrow16(x, out, n, to_half16); }
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen16(x, out, n, from_half16); }
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) { narrow16(x, out, n, to_bf16_16); }
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen16(x, out, n, from_bf16_16); }
}  // namespace kernels
}  // namespace trueno::cpu::avx512
