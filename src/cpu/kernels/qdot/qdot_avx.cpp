// Quantized block dot products for avx: the generic bodies compiled with this ISA's flags.
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdot/qdot_impl.h"
#include "cpu/kernels/qdot/qdot_kernels.h"
