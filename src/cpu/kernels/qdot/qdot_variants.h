// Declarations of kernel variants that exist beside an ISA's table and replace some of its entries at
// run time when the CPU has an extension (NEON dotprod, AVX-512 VNNI). Declared here because they are
// not a TRUENO_CPU_ISA_LIST entry.
#pragma once
#include "cpu/kernels/kernel_types.h"

#define TRUENO_QDOT_VARIANT_DECLS                                                                     \
  QDot dot_q4_0_q8_0, dot_q8_0_q8_0, dot_q4_k_q8_k, dot_q5_k_q8_k, dot_q6_k_q8_k;                       \
  QDotRows dot_rows_q4_0_q8_0, dot_rows_q8_0_q8_0, dot_rows_q4_k_q8_k, dot_rows_q5_k_q8_k, dot_rows_q6_k_q8_k; \
  QDotX8 dot_x8_q4_k_q8_k, dot_x8_q6_k_q8_k, dot_x8_q8_0_q8_0;

namespace trueno::cpu::neon_dotprod::kernels {
TRUENO_QDOT_VARIANT_DECLS
}
namespace trueno::cpu::avx512_vnni::kernels {
TRUENO_QDOT_VARIANT_DECLS
}
#undef TRUENO_QDOT_VARIANT_DECLS
