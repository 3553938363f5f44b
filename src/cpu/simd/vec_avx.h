// The vector API on AVX: 8 floats per __m256. No FMA and no 256-bit integer ops (those come with AVX2).
#pragma once
#include <immintrin.h>

#define TRUENO_ISA avx

namespace trueno::cpu::avx {
#define TRUENO_YMM_FMA 0
#define TRUENO_YMM_INT256 0
#include "cpu/simd/vec_ymm_body.inc"
#undef TRUENO_YMM_FMA
#undef TRUENO_YMM_INT256
}  // namespace trueno::cpu::avx
