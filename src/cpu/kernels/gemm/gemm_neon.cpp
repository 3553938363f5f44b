// GEMM, matvec and transpose for neon: micro-kernel 8 rows x 3 vectors.
#include "cpu/simd/vec_neon.h"

namespace trueno::cpu::neon {
constexpr int kMR = 8, kNRV = 3;  // 24 accumulators + 3 B + 1 A of 32 q registers
}

#include "cpu/kernels/gemm/gemm_impl.h"
