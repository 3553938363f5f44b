// The vector API on AVX2+FMA: 8 floats per __m256, fused multiply-add, 256-bit integer ops.
#pragma once
#include <immintrin.h>

#define TRUENO_ISA avx2

namespace trueno::cpu::avx2 {
#define TRUENO_YMM_FMA 1
#define TRUENO_YMM_INT256 1
#include "cpu/simd/vec_ymm_body.inc"
#undef TRUENO_YMM_FMA
#undef TRUENO_YMM_INT256
}  // namespace trueno::cpu::avx2
