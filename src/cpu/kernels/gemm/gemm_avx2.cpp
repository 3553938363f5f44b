// GEMM, matvec and transpose for avx2: micro-kernel 6 rows x 2 vectors.
#include "cpu/simd/vec_avx2.h"

namespace trueno::cpu::avx2 {
constexpr int kMR = 6, kNRV = 2;  // 12 accumulators + 2 B + 1 A of 16 ymm
}

#include "cpu/kernels/gemm/gemm_impl.h"
