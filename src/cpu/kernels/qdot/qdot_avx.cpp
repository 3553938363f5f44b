// Quantized block dot products for AVX: AVX has no 256-bit integer instructions, so the SSE2 integer
// bodies (qdot_sse2_body.inc), VEX-encoded.
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/qdot/qdot_sse2_body.inc"
