// Quantized block dots for AVX-512: k-quants (qdot_avx512_body.inc) and Q8_0/Q4_0 (qdot_avx512_b32.inc)
// in 512-bit registers; the 8-row decode dots from the AVX2 body compiled with this tier's flags.
#include "cpu/simd/vec_avx512.h"
#define TRUENO_QDOT_VNNI 0
#define TRUENO_QDOT_WIDE_KQUANTS 1
#define TRUENO_QDOT_WIDE_B32 1
#include "cpu/kernels/qdot/qdot_avx2_body.inc"
#include "cpu/kernels/qdot/qdot_avx512_body.inc"
#include "cpu/kernels/qdot/qdot_avx512_b32.inc"
