// Quantized block dot products for SSE2: the hand-written bodies in qdot_sse2_body.inc.
#include "cpu/simd/vec_sse2.h"
#include "cpu/kernels/qdot/qdot_sse2_body.inc"
