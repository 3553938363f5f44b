// GEMM, matvec and transpose for wasm_simd: micro-kernel 4 rows x 2 vectors.
#include "cpu/simd/vec_wasm_simd.h"

namespace trueno::cpu::wasm_simd {
// The engine maps v128 values onto the host's registers: 16 xmm on x86-64, the SSE2 tier's budget
// (8 accumulators + 2 B + 1 A + 1 product; no FMA).
constexpr int kMR = 4, kNRV = 2;
}

#include "cpu/kernels/gemm/gemm_impl.h"
