// Reductions for avx512: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx512.h"
#include "cpu/kernels/reduce/reduce_impl.h"
