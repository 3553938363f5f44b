// Element-wise kernels for avx: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/elementwise/elementwise_impl.h"
