// GEMM, matvec and transpose for avx512: micro-kernel 12 rows x 2 vectors.
#include "cpu/simd/vec_avx512.h"

namespace trueno::cpu::avx512 {
constexpr int kMR = 12, kNRV = 2;  // 24 accumulators + 2 B + 1 A of 32 zmm
}

#include "cpu/kernels/gemm/gemm_impl.h"
