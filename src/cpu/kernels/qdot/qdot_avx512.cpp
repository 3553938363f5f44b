// Quantized block dots for AVX-512: k-quants in 512-bit registers (qdot_avx512_body.inc), Q8_0/Q4_0
// from the AVX2 bodies compiled with this tier's flags.
#include "cpu/simd/vec_avx512.h"
#define TRUENO_QDOT_VNNI 0
#define TRUENO_QDOT_WIDE_KQUANTS 1
#include "cpu/kernels/qdot/qdot_avx2_body.inc"
#include "cpu/kernels/qdot/qdot_avx512_body.inc"
