// Reductions for avx2: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_avx2.h"
#include "cpu/kernels/reduce/reduce_impl.h"
