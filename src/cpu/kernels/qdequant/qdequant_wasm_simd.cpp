// Dequantization for wasm_simd: the block decoders compiled with this ISA's flags.
#include "cpu/simd/vec_wasm_simd.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/qdequant/qdequant_impl.h"
#include "cpu/kernels/qdequant/qdequant_kernels.h"
