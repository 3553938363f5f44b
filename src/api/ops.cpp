// trueno::ops: argument checks, then one call through the dispatch table.
#include "trueno/ops.h"

#include <vector>

#include "core/parallel.h"
#include "core/strings.h"
#include "trueno/threads.h"
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

// Large element-wise calls are split across the pool: each element depends on its own inputs only,
// so results are bit-identical for any thread count. Below ~256K elements one core keeps up with
// memory and waking the pool costs more than it saves.
constexpr std::size_t kParallelMin = std::size_t{1} << 18;
constexpr std::size_t kChunkElems = std::size_t{1} << 16;

template <class F>
void for_chunks(std::size_t n, F f) {
  if (n < kParallelMin || num_threads() == 1) {
    f(std::size_t{0}, n);
    return;
  }
  struct Ctx {
    F* f;
    std::size_t n;
  } ctx{&f, n};
  detail::parallel_run((n + kChunkElems - 1) / kChunkElems, [](void* p, std::size_t chunk) {
    auto* c = static_cast<Ctx*>(p);
    const std::size_t begin = chunk * kChunkElems;
    (*c->f)(begin, std::min(kChunkElems, c->n - begin));
  }, &ctx);
}

#define BINARY_OP(name)                                                                               \
  void name(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e) {       \
    check_same(#name, a.size(), b.size(), out.size());                                                \
    check_alias(#name, a, out);                                                                       \
    check_alias(#name, b, out);                                                                       \
    const auto& k = kernels(e, #name);                                                                \
    for_chunks(out.size(), [&](std::size_t i, std::size_t len) { k.name(a.data() + i, b.data() + i, out.data() + i, len); }); \
  }
#define UNARY_OP(name)                                                                   \
  void name(std::span<const float> x, std::span<float> out, Exec e) {                    \
    check_out(#name, x.size(), out.size());                                              \
    check_alias(#name, x, out);                                                          \
    const auto& k = kernels(e, #name);                                                   \
    for_chunks(out.size(), [&](std::size_t i, std::size_t len) { k.name(x.data() + i, out.data() + i, len); }); \
  }

// Strided element-wise ops: gather chunks to contiguous scratch, run the kernel, scatter.
constexpr std::size_t kChunk = 1024;

template <class Kernel>
void strided_map(const char* op, const Strided<const float>* in, int n_inputs, Strided<float> out, Kernel kernel) {
  for (int i = 0; i < n_inputs; ++i)
    if (in[i].size != out.size)
      throw ShapeError(strcat(op, ": input ", i, " has ", in[i].size, " elements, out has ", out.size));
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
  const auto& k = kernels(e, "scale");
  for_chunks(out.size(), [&](std::size_t i, std::size_t len) { k.scale(x.data() + i, alpha, out.data() + i, len); });
}

void clamp(std::span<const float> x, float lo, float hi, std::span<float> out, Exec e) {
  if (!(lo <= hi)) throw InvalidArgument(strcat("clamp: need lo <= hi (both numbers), got lo=", lo, " hi=", hi));
  check_out("clamp", x.size(), out.size());
  check_alias("clamp", x, out);
  const auto& k = kernels(e, "clamp");
  for_chunks(out.size(), [&](std::size_t i, std::size_t len) { k.clamp(x.data() + i, lo, hi, out.data() + i, len); });
}

void fma(std::span<const float> a, std::span<const float> b, std::span<const float> c, std::span<float> out, Exec e) {
  check_same("fma", a.size(), b.size(), out.size());
  check_out("fma", c.size(), out.size());
  check_alias("fma", a, out), check_alias("fma", b, out), check_alias("fma", c, out);
  const auto& k = kernels(e, "fma");
  for_chunks(out.size(), [&](std::size_t i, std::size_t len) {
    k.fma(a.data() + i, b.data() + i, c.data() + i, out.data() + i, len);
  });
}

#define STRIDED_BINARY(name)                                                                              \
  void name(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e) {                 \
    const auto& k = kernels(e, #name);                                                                    \
    const Strided<const float> in[2] = {a, b};                                                            \
    strided_map(#name, in, 2, out, [&](float* x, float* y, float* o, std::size_t n) { k.name(x, y, o, n); }); \
  }
STRIDED_BINARY(add)
STRIDED_BINARY(sub)
STRIDED_BINARY(mul)
STRIDED_BINARY(div)
STRIDED_BINARY(swiglu)

#define STRIDED_UNARY(name)                                                                                 \
  void name(Strided<const float> x, Strided<float> out, Exec e) {                                         \
    const auto& k = kernels(e, #name);                                                                    \
    strided_map(#name, &x, 1, out, [&](float* a, float*, float* o, std::size_t n) { k.name(a, o, n); }); \
  }
STRIDED_UNARY(abs)
STRIDED_UNARY(relu)
STRIDED_UNARY(exp)
STRIDED_UNARY(sigmoid)
STRIDED_UNARY(tanh)
STRIDED_UNARY(gelu_tanh)
STRIDED_UNARY(gelu_erf)
STRIDED_UNARY(silu)

void scale(Strided<const float> x, float alpha, Strided<float> out, Exec e) {
  const auto& k = kernels(e, "scale");
  strided_map("scale", &x, 1, out, [&](float* a, float*, float* o, std::size_t n) { k.scale(a, alpha, o, n); });
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
#define STRIDED_REDUCE(type, name) \
  type name(Strided<const float> x, Exec e) { return name(std::span<const float>(gather(x)), e); }
STRIDED_REDUCE(float, sum)
STRIDED_REDUCE(float, max)
STRIDED_REDUCE(float, min)
STRIDED_REDUCE(std::size_t, argmax)
STRIDED_REDUCE(std::size_t, argmin)
STRIDED_REDUCE(float, norm_l2)
STRIDED_REDUCE(float, mean)
STRIDED_REDUCE(float, variance)

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

#define CONVERT_OP(name, In, Out)                                                                       \
  void name(std::span<const In> x, std::span<Out> out, Exec e) {                                        \
    check_out(#name, x.size(), out.size());                                                             \
    if (x.size() && (overlaps_partially(x.data(), x.size(), out.data(), out.size()) ||                  \
                     static_cast<const void*>(x.data()) == out.data()))                                 \
      throw InvalidArgument(#name ": in and out must not overlap");                                     \
    const auto& k = kernels(e, #name);                                                                  \
    for_chunks(x.size(), [&](std::size_t i, std::size_t len) { k.name(x.data() + i, out.data() + i, len); }); \
  }
CONVERT_OP(f32_to_f16, float, std::uint16_t)
CONVERT_OP(f16_to_f32, std::uint16_t, float)
CONVERT_OP(f32_to_bf16, float, std::uint16_t)
CONVERT_OP(bf16_to_f32, std::uint16_t, float)

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
  if (overlaps_partially(y.data(), y.size(), x.data(), x.size()) || (m && k && (const void*)y.data() == x.data()) ||
      (m && k && (overlaps_partially(y.data(), y.size(), a, (m - 1) * lda + k) || (const void*)y.data() == a)))
    throw InvalidArgument("matvec: y must not overlap A or x");
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
