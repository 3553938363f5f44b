// f16/bf16 conversions for AVX2 + F16C: hardware f16 conversion (vcvtps2ph, round to nearest even),
// bf16 through the SSE2 integer code (VEX-encoded).
#include <immintrin.h>

#include "cpu/simd/vec_avx2.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/convert/convert_sse2_impl.h"

namespace trueno::cpu::avx2::kernels {

void f32_to_f16(const float* x, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  if (i < n) {
    float in[8] = {};
    std::uint16_t o[8];
    for (std::size_t j = 0; j < n - i; ++j) in[j] = x[i + j];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm256_cvtps_ph(_mm256_loadu_ps(in), _MM_FROUND_TO_NEAREST_INT));
    for (std::size_t j = 0; j < n - i; ++j) out[i + j] = o[j];
  }
}
void f16_to_f32(const std::uint16_t* x, float* out, std::size_t n) {
  widen8(x, out, n, [](__m128i h, float* o) { _mm256_storeu_ps(o, _mm256_cvtph_ps(h)); });
}
void f32_to_bf16(const float* x, std::uint16_t* out, std::size_t n) { narrow8(x, out, n, to_bf16_4); }
void bf16_to_f32(const std::uint16_t* x, float* out, std::size_t n) { widen8(x, out, n, bf16x8_to_f32); }

}  // namespace trueno::cpu::avx2::kernels
