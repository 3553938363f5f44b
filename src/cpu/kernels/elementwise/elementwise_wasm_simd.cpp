// Element-wise kernels for wasm_simd: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_wasm_simd.h"
#include "cpu/kernels/elementwise/elementwise_impl.h"
