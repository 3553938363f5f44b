// Quantized block dot products, scalar reference: the generic bodies compiled without vectorization.
#include "cpu/simd/vec_scalar.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdot/qdot_impl.h"
#include "cpu/kernels/qdot/qdot_kernels.h"
