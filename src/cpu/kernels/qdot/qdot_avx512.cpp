// Quantized block dot products for AVX-512: the hand-written AVX2 bodies (qdot_avx2_body.inc), compiled
// with this tier's flags, until 512-bit / VNNI versions are written; faster than the generic bodies.
#include "cpu/simd/vec_avx512.h"
#include "cpu/kernels/qdot/qdot_avx2_body.inc"
