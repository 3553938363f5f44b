// Row-wise normalizations for wasm_simd: the generic body compiled with this ISA's flags only.
#include "cpu/simd/vec_wasm_simd.h"
#include "cpu/kernels/normalize/normalize_impl.h"
