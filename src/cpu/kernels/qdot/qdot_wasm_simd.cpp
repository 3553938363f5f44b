// Quantized block dot products for WebAssembly SIMD128: the hand-written bodies in
// qdot_wasm_simd_body.inc.
#include "cpu/simd/vec_wasm_simd.h"
#include "cpu/kernels/qdot/qdot_wasm_simd_body.inc"
