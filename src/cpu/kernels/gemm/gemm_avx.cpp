// GEMM, matvec and transpose for avx: micro-kernel 4 rows x 2 vectors.
#include "cpu/simd/vec_avx.h"

namespace trueno::cpu::avx {
constexpr int kMR = 4, kNRV = 2;  // 8 accumulators + 2 B + 1 A + 1 product of 16 ymm (no FMA)
}

#include "cpu/kernels/gemm/gemm_impl.h"
