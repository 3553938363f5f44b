// Row-wise normalizations for neon: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_neon.h"
#include "cpu/kernels/normalize/normalize_impl.h"
