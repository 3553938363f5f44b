// f16/bf16 conversions for SSE2 (integer bit manipulation; no F16C on this tier).
#include "cpu/simd/vec_sse2.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/convert/convert_sse2_impl.h"
#include "cpu/kernels/convert/convert_int_kernels.h"
