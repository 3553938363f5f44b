// Reductions for neon: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_neon.h"
#include "cpu/kernels/reduce/reduce_impl.h"
