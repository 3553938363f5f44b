// Element-wise kernels for avx2: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx2.h"
#include "cpu/kernels/elementwise/elementwise_impl.h"
