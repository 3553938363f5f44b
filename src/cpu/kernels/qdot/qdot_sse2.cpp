// Quantized block dot products for sse2: the generic bodies compiled with this ISA's flags.
#include "cpu/simd/vec_sse2.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdot/qdot_impl.h"
#include "cpu/kernels/qdot/qdot_kernels.h"
