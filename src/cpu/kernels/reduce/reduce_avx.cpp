// Reductions for avx: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx.h"
#include "cpu/kernels/reduce/reduce_impl.h"
