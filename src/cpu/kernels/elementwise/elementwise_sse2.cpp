// Element-wise kernels for sse2: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_sse2.h"
#include "cpu/kernels/elementwise/elementwise_impl.h"
