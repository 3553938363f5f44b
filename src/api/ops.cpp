// trueno::ops: argument checks, then one call through the dispatch table.
#include "trueno/ops.h"

#include <vector>

#include "core/strings.h"
#include "cpu/dispatch.h"
#include "trueno/error.h"

namespace trueno::ops {
namespace {

using cpu::kernels;

template <class A, class B>
bool overlaps_partially(const A* a, std::size_t na, const B* b, std::size_t nb) {
  const auto* pa = reinterpret_cast<const char*>(a);
  const auto* pb = reinterpret_cast<const char*>(b);
  if (na == 0 || nb == 0 || pa == pb) return false;
  return pa < pb + nb * sizeof(B) && pb < pa + na * sizeof(A);
}

void check_same(const char* op, std::size_t a, std::size_t b, std::size_t out) {
  if (a != b || a != out)
    throw ShapeError(strcat(op, ": sizes differ (a: ", a, ", b: ", b, ", out: ", out,
                            "); all operands must have the same length"));
}

void check_out(const char* op, std::size_t in, std::size_t out) {
  if (in != out) throw ShapeError(strcat(op, ": out has ", out, " elements but the input has ", in, "; they must match"));
}

template <class In, class Out>
void check_alias(const char* op, std::span<In> in, std::span<Out> out) {
  if (overlaps_partially(in.data(), in.size(), out.data(), out.size()))
    throw InvalidArgument(strcat(op, ": out partially overlaps an input; use the same buffer (in place) or disjoint ones"));
}

void check_nonempty(const char* op, std::size_t n) {
  if (n == 0) throw InvalidArgument(strcat(op, ": undefined for an empty input; pass at least one element"));
}

#define BINARY_OP(name)                                                                               \
  void name(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e) {       \
    check_same(#name, a.size(), b.size(), out.size());                                                \
    check_alias(#name, a, out);                                                                       \
    check_alias(#name, b, out);                                                                       \
    kernels(e, #name).name(a.data(), b.data(), out.data(), out.size());                               \
  }
#define UNARY_OP(name)                                                                   \
  void name(std::span<const float> x, std::span<float> out, Exec e) {                    \
    check_out(#name, x.size(), out.size());                                              \
    check_alias(#name, x, out);                                                          \
    kernels(e, #name).name(x.data(), out.data(), out.size());                            \
  }

// Strided element-wise ops: gather chunks to contiguous scratch, run the kernel, scatter.
constexpr std::size_t kChunk = 1024;

template <class Kernel>
void strided_map(const char* op, std::size_t n_in, const Strided<const float>* in, int n_inputs, Strided<float> out,
                 Kernel kernel) {
  for (int i = 0; i < n_inputs; ++i)
    if (in[i].size != out.size)
      throw ShapeError(strcat(op, ": input ", i, " has ", in[i].size, " elements, out has ", out.size));
  (void)n_in;
  if (out.size > 0 && out.stride == 0) throw InvalidArgument(strcat(op, ": output stride must not be 0"));
  float buf[3][kChunk];
  for (std::size_t base = 0; base < out.size; base += kChunk) {
    const std::size_t len = std::min(kChunk, out.size - base);
    for (int i = 0; i < n_inputs; ++i)
      for (std::size_t j = 0; j < len; ++j) buf[i][j] = in[i][base + j];
    kernel(buf[0], buf[1], buf[2], len);
    for (std::size_t j = 0; j < len; ++j) out[base + j] = buf[2][j];
  }
}

std::vector<float> gather(Strided<const float> x) {
  std::vector<float> v(x.size);
  for (std::size_t i = 0; i < x.size; ++i) v[i] = x[i];
  return v;
}

}  // namespace

BINARY_OP(add)
BINARY_OP(sub)
BINARY_OP(mul)
BINARY_OP(div)
BINARY_OP(swiglu)
UNARY_OP(abs)
UNARY_OP(relu)
UNARY_OP(exp)
UNARY_OP(sigmoid)
UNARY_OP(tanh)
UNARY_OP(gelu_tanh)
UNARY_OP(gelu_erf)
UNARY_OP(silu)

void scale(std::span<const float> x, float alpha, std::span<float> out, Exec e) {
  check_out("scale", x.size(), out.size());
  check_alias("scale", x, out);
  kernels(e, "scale").scale(x.data(), alpha, out.data(), out.size());
}

void clamp(std::span<const float> x, float lo, float hi, std::span<float> out, Exec e) {
  if (!(lo <= hi)) throw InvalidArgument(strcat("clamp: need lo <= hi (both numbers), got lo=", lo, " hi=", hi));
  check_out("clamp", x.size(), out.size());
  check_alias("clamp", x, out);
  kernels(e, "clamp").clamp(x.data(), lo, hi, out.data(), out.size());
}

void fma(std::span<const float> a, std::span<const float> b, std::span<const float> c, std::span<float> out, Exec e) {
  check_same("fma", a.size(), b.size(), out.size());
  check_out("fma", c.size(), out.size());
  check_alias("fma", a, out), check_alias("fma", b, out), check_alias("fma", c, out);
  kernels(e, "fma").fma(a.data(), b.data(), c.data(), out.data(), out.size());
}

#define STRIDED_BINARY(name)                                                                              \
  void name(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e) {                 \
    const auto& k = kernels(e, #name);                                                                    \
    const Strided<const float> in[2] = {a, b};                                                            \
    strided_map(#name, 2, in, 2, out, [&](float* x, float* y, float* o, std::size_t n) { k.name(x, y, o, n); }); \
  }
STRIDED_BINARY(add)
STRIDED_BINARY(sub)
STRIDED_BINARY(mul)
STRIDED_BINARY(div)

void scale(Strided<const float> x, float alpha, Strided<float> out, Exec e) {
  const auto& k = kernels(e, "scale");
  strided_map("scale", 1, &x, 1, out, [&](float* a, float*, float* o, std::size_t n) { k.scale(a, alpha, o, n); });
}

void exp(Strided<const float> x, Strided<float> out, Exec e) {
  const auto& k = kernels(e, "exp");
  strided_map("exp", 1, &x, 1, out, [&](float* a, float*, float* o, std::size_t n) { k.exp(a, o, n); });
}

float sum(std::span<const float> x, Exec e) { return kernels(e, "sum").sum(x.data(), x.size()); }

float dot(std::span<const float> x, std::span<const float> y, Exec e) {
  if (x.size() != y.size())
    throw ShapeError(strcat("dot: x has ", x.size(), " elements, y has ", y.size(), "; they must match"));
  return kernels(e, "dot").dot(x.data(), y.data(), x.size());
}

float dot(Strided<const float> x, Strided<const float> y, Exec e) {
  const auto gx = gather(x), gy = gather(y);
  return dot(std::span<const float>(gx), std::span<const float>(gy), e);
}

#define NONEMPTY_REDUCE(type, name)                                       \
  type name(std::span<const float> x, Exec e) {                          \
    check_nonempty(#name, x.size());                                      \
    return kernels(e, #name).name(x.data(), x.size());                    \
  }
NONEMPTY_REDUCE(float, max)
NONEMPTY_REDUCE(float, min)
NONEMPTY_REDUCE(std::size_t, argmax)
NONEMPTY_REDUCE(std::size_t, argmin)
NONEMPTY_REDUCE(float, mean)
NONEMPTY_REDUCE(float, variance)

float norm_l2(std::span<const float> x, Exec e) { return kernels(e, "norm_l2").norm_l2(x.data(), x.size()); }
float sum(Strided<const float> x, Exec e) { return sum(std::span<const float>(gather(x)), e); }
float max(Strided<const float> x, Exec e) { return max(std::span<const float>(gather(x)), e); }

void softmax(std::span<const float> x, std::span<float> out, Exec e) {
  check_out("softmax", x.size(), out.size());
  check_alias("softmax", x, out);
  kernels(e, "softmax").softmax(x.data(), out.data(), x.size());
}

void log_softmax(std::span<const float> x, std::span<float> out, Exec e) {
  check_out("log_softmax", x.size(), out.size());
  check_alias("log_softmax", x, out);
  kernels(e, "log_softmax").log_softmax(x.data(), out.data(), x.size());
}

void rmsnorm(std::span<const float> x, std::span<const float> weight, float eps, std::span<float> out, Exec e) {
  check_same("rmsnorm", x.size(), weight.size(), out.size());
  if (!(eps >= 0.0f)) throw InvalidArgument(strcat("rmsnorm: eps must be >= 0, got ", eps));
  check_alias("rmsnorm", x, out), check_alias("rmsnorm", weight, out);
  kernels(e, "rmsnorm").rmsnorm(x.data(), weight.data(), eps, out.data(), x.size());
}

void layernorm(std::span<const float> x, std::span<const float> weight, std::span<const float> bias, float eps,
               std::span<float> out, Exec e) {
  check_same("layernorm", x.size(), weight.size(), out.size());
  check_out("layernorm", bias.size(), out.size());
  if (!(eps >= 0.0f)) throw InvalidArgument(strcat("layernorm: eps must be >= 0, got ", eps));
  check_alias("layernorm", x, out), check_alias("layernorm", weight, out), check_alias("layernorm", bias, out);
  kernels(e, "layernorm").layernorm(x.data(), weight.data(), bias.data(), eps, out.data(), x.size());
}

void f32_to_f16(std::span<const float> x, std::span<std::uint16_t> out, Exec e) {
  check_out("f32_to_f16", x.size(), out.size());
  if (overlaps_partially(x.data(), x.size(), out.data(), out.size()) || (x.size() && (const void*)x.data() == out.data()))
    throw InvalidArgument("f32_to_f16: in and out must not overlap");
  kernels(e, "f32_to_f16").f32_to_f16(x.data(), out.data(), x.size());
}
void f16_to_f32(std::span<const std::uint16_t> x, std::span<float> out, Exec e) {
  check_out("f16_to_f32", x.size(), out.size());
  if (overlaps_partially(x.data(), x.size(), out.data(), out.size()) || (x.size() && (const void*)x.data() == out.data()))
    throw InvalidArgument("f16_to_f32: in and out must not overlap");
  kernels(e, "f16_to_f32").f16_to_f32(x.data(), out.data(), x.size());
}
void f32_to_bf16(std::span<const float> x, std::span<std::uint16_t> out, Exec e) {
  check_out("f32_to_bf16", x.size(), out.size());
  if (overlaps_partially(x.data(), x.size(), out.data(), out.size()) || (x.size() && (const void*)x.data() == out.data()))
    throw InvalidArgument("f32_to_bf16: in and out must not overlap");
  kernels(e, "f32_to_bf16").f32_to_bf16(x.data(), out.data(), x.size());
}
void bf16_to_f32(std::span<const std::uint16_t> x, std::span<float> out, Exec e) {
  check_out("bf16_to_f32", x.size(), out.size());
  if (overlaps_partially(x.data(), x.size(), out.data(), out.size()) || (x.size() && (const void*)x.data() == out.data()))
    throw InvalidArgument("bf16_to_f32: in and out must not overlap");
  kernels(e, "bf16_to_f32").bf16_to_f32(x.data(), out.data(), x.size());
}

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
            std::size_t ldb, float* c, std::size_t ldc, Exec e) {
  if (lda < k || ldb < n || ldc < n)
    throw ShapeError(strcat("matmul: leading dimensions too small for A[", m, "x", k, "] B[", k, "x", n, "] C[", m, "x",
                            n, "]: need lda >= ", k, " (got ", lda, "), ldb >= ", n, " (got ", ldb, "), ldc >= ", n,
                            " (got ", ldc, ")"));
  if ((m && k && !a) || (k && n && !b) || (m && n && !c)) throw InvalidArgument("matmul: null matrix pointer");
  const std::size_t nc = m ? (m - 1) * ldc + n : 0;
  if (overlaps_partially(a, m ? (m - 1) * lda + k : 0, c, nc) || (m && n && k && (const void*)a == c) ||
      overlaps_partially(b, k ? (k - 1) * ldb + n : 0, c, nc) || (m && n && k && (const void*)b == c))
    throw InvalidArgument("matmul: C must not overlap A or B");
  kernels(e, "matmul").matmul(m, n, k, a, lda, b, ldb, c, ldc);
}

void matvec(std::size_t m, std::size_t k, const float* a, std::size_t lda, std::span<const float> x,
            std::span<float> y, Exec e) {
  if (x.size() != k || y.size() != m || lda < k)
    throw ShapeError(strcat("matvec: A is ", m, "x", k, " (lda ", lda, "), x has ", x.size(), ", y has ", y.size(),
                            "; need x of ", k, ", y of ", m, ", lda >= ", k));
  if (m && k && !a) throw InvalidArgument("matvec: null matrix pointer");
  kernels(e, "matvec").matvec(m, k, a, lda, x.data(), y.data());
}

void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb,
               Exec e) {
  if (lda < cols || ldb < rows)
    throw ShapeError(strcat("transpose: A is ", rows, "x", cols, " (lda ", lda, "), B is ", cols, "x", rows, " (ldb ",
                            ldb, "); need lda >= ", cols, " and ldb >= ", rows));
  if (rows && cols && (!a || !b)) throw InvalidArgument("transpose: null matrix pointer");
  if (rows && cols &&
      (overlaps_partially(a, (rows - 1) * lda + cols, b, (cols - 1) * ldb + rows) || (const void*)a == b))
    throw InvalidArgument("transpose: out of place only; A and B must not overlap");
  kernels(e, "transpose").transpose(rows, cols, a, lda, b, ldb);
}

}  // namespace trueno::ops
