// f16/bf16 conversions for AVX: the SSE2 integer code, VEX-encoded (F16C is not part of the AVX tier).
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/convert/convert_sse2_impl.h"
#include "cpu/kernels/convert/convert_int_kernels.h"
