// Quantized block dot products for AVX2: the hand-written bodies in qdot_avx2_body.inc.
#include "cpu/simd/vec_avx2.h"
#include "cpu/kernels/qdot/qdot_avx2_body.inc"
