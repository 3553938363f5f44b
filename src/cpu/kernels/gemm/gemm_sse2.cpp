// GEMM, matvec and transpose for sse2: micro-kernel 4 rows x 2 vectors.
#include "cpu/simd/vec_sse2.h"

namespace trueno::cpu::sse2 {
constexpr int kMR = 4, kNRV = 2;  // 8 accumulators + 2 B + 1 A + 1 product of 16 xmm (no FMA)
}

#include "cpu/kernels/gemm/gemm_impl.h"
