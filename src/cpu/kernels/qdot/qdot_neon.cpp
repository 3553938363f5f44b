// Quantized block dot products for baseline NEON (smull + sadalp): qdot_neon_body.inc.
#include "cpu/simd/vec_neon.h"
#define TRUENO_NEON_DOTPROD 0
#include "cpu/kernels/qdot/qdot_neon_body.inc"
