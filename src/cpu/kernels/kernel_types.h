// Kernel signatures (as function types), the dispatch table, and every ISA's kernel declarations.
//
// Note [ISA namespaces]
// Every kernel variant lives in trueno::cpu::<isa>::kernels and is compiled in its own translation
// unit with exactly that ISA's flags; helpers live in trueno::cpu::<isa>. Inline helpers thus get
// ISA-specific mangled names: the linker can never pick an AVX2-compiled copy of a helper for an SSE2
// caller. ISA translation units hold no dynamic initializers and call no std templates that could be
// emitted out of line with wider instructions.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cpu/kernels/kernels.inc"

namespace trueno::cpu {

// y[i] = f(a[i], b[i]); out may alias a or b exactly.
using Binary = void(const float* a, const float* b, float* out, std::size_t n);
// y[i] = f(x[i]); out may alias x.
using Unary = void(const float* x, float* out, std::size_t n);
using Scale = void(const float* x, float alpha, float* out, std::size_t n);
using Clamp = void(const float* x, float lo, float hi, float* out, std::size_t n);
// out[i] = a[i] * b[i] + c[i]
using Ternary = void(const float* a, const float* b, const float* c, float* out, std::size_t n);
// Reductions over n >= 1 values (sum, dot and norm_l2 also accept n = 0).
using Reduce = float(const float* x, std::size_t n);
using Reduce2 = float(const float* x, const float* y, std::size_t n);
using ArgReduce = std::size_t(const float* x, std::size_t n);
// Row-wise ops over one row of n values; out may alias x.
using Row = void(const float* x, float* out, std::size_t n);
using RmsNorm = void(const float* x, const float* w, float eps, float* out, std::size_t n);
using LayerNorm = void(const float* x, const float* w, const float* b, float eps, float* out, std::size_t n);
using ToHalf = void(const float* x, std::uint16_t* out, std::size_t n);
using FromHalf = void(const std::uint16_t* x, float* out, std::size_t n);
// Row-major C[m][n] = A[m][k] * B[k][n]; leading dimensions in elements.
using Matmul = void(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float* c, std::size_t ldc);
// y[m] = A[m][k] * x[k]
using Matvec = void(std::size_t m, std::size_t k, const float* a, std::size_t lda, const float* x, float* y);
// B[cols][rows] = A[rows][cols]^T
using Transpose = void(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b,
                       std::size_t ldb);
// One weight row of nb blocks against activations quantized to the matching 8-bit blocks
// (Note [Quantized activations] in qdot/qdot_impl.h).
using QDot = float(const void* w, const void* xq, std::size_t nb);
// The same weight row against m activation rows (xq_row_bytes apart): out[i] equals the single-row
// dot with row i bit for bit; the weight blocks are decoded once for all m rows (prefill).
using QDotRows = void(const void* w, const void* xq, std::size_t xq_row_bytes, std::size_t m, std::size_t nb,
                      float* out);
// Eight weight rows interleaved (Note [Interleaved rows], quant/blocks.h: nb blocks of 8 rows) against
// one activation row: out[r] equals the single-row dot of row r bit for bit (decode).
using QDotX8 = void(const void* w8, const void* xq, std::size_t nb, float* out);
// nb blocks of a quantized type -> f32 values.
using Dequant = void(const void* src, float* dst, std::size_t nb);

// One backend's kernels, one field per entry of TRUENO_KERNEL_LIST.
struct KernelTable {
#define TRUENO_FIELD(family, op, kind) kind* op;
  TRUENO_KERNEL_LIST(TRUENO_FIELD)
#undef TRUENO_FIELD
};

// Declarations of every compiled ISA's kernels: trueno::cpu::<isa>::kernels::<op>.
#define TRUENO_DECLARE(family, op, kind) kind op;
#define TRUENO_DECLARE_ISA(isa, Enum) \
  namespace isa::kernels {            \
  TRUENO_KERNEL_LIST(TRUENO_DECLARE)  \
  }
TRUENO_CPU_ISA_LIST(TRUENO_DECLARE_ISA)
#undef TRUENO_DECLARE_ISA
#undef TRUENO_DECLARE

}  // namespace trueno::cpu
