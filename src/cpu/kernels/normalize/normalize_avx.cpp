// Row-wise normalizations for avx: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/normalize/normalize_impl.h"
