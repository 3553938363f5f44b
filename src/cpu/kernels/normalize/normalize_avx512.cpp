// Row-wise normalizations for avx512: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx512.h"
#include "cpu/kernels/normalize/normalize_impl.h"
