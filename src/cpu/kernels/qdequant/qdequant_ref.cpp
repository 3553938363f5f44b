// Dequantization scalar reference: the block decoders compiled without vectorization.
#include "cpu/simd/vec_scalar.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdequant/qdequant_impl.h"
#include "cpu/kernels/qdequant/qdequant_kernels.h"
