// trueno's f32 ops on spans: the layer under Vector and Matrix. Every op takes an optional backend
// that forces it for this call (an unavailable one throws BackendUnavailable); without it the op runs
// on trueno::current_backend(). Sizes are checked: mismatches throw ShapeError naming op and sizes.
// Outputs may alias an input exactly (in place); partial overlap throws InvalidArgument.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "trueno/backend.h"

namespace trueno {

using Exec = std::optional<Backend>;

// A view of n floats spaced `stride` elements apart (stride may be negative or 0 for inputs).
template <class T>
struct Strided {
  T* data = nullptr;
  std::size_t size = 0;
  std::ptrdiff_t stride = 1;
  T& operator[](std::size_t i) const { return data[static_cast<std::ptrdiff_t>(i) * stride]; }
};

namespace ops {

// ---- element-wise: out[i] = f(a[i], b[i]) ----
void add(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e = {});
void sub(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e = {});
void mul(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e = {});
void div(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e = {});
// silu(a[i]) * b[i]
void swiglu(std::span<const float> a, std::span<const float> b, std::span<float> out, Exec e = {});
void scale(std::span<const float> x, float alpha, std::span<float> out, Exec e = {});
// lo <= hi required; NaN stays NaN.
void clamp(std::span<const float> x, float lo, float hi, std::span<float> out, Exec e = {});
// a[i] * b[i] + c[i], rounded twice (as a separate multiply and add) on every backend.
void fma(std::span<const float> a, std::span<const float> b, std::span<const float> c, std::span<float> out,
         Exec e = {});
void abs(std::span<const float> x, std::span<float> out, Exec e = {});
void relu(std::span<const float> x, std::span<float> out, Exec e = {});
void exp(std::span<const float> x, std::span<float> out, Exec e = {});
void sigmoid(std::span<const float> x, std::span<float> out, Exec e = {});
void tanh(std::span<const float> x, std::span<float> out, Exec e = {});
void gelu_tanh(std::span<const float> x, std::span<float> out, Exec e = {});
void gelu_erf(std::span<const float> x, std::span<float> out, Exec e = {});
void silu(std::span<const float> x, std::span<float> out, Exec e = {});

// Strided forms of the element-wise ops (gathered in cache-sized chunks, then the same kernels).
// out may alias an input only with the same data pointer and stride.
void add(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e = {});
void sub(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e = {});
void mul(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e = {});
void div(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e = {});
void swiglu(Strided<const float> a, Strided<const float> b, Strided<float> out, Exec e = {});
void scale(Strided<const float> x, float alpha, Strided<float> out, Exec e = {});
void abs(Strided<const float> x, Strided<float> out, Exec e = {});
void relu(Strided<const float> x, Strided<float> out, Exec e = {});
void exp(Strided<const float> x, Strided<float> out, Exec e = {});
void sigmoid(Strided<const float> x, Strided<float> out, Exec e = {});
void tanh(Strided<const float> x, Strided<float> out, Exec e = {});
void gelu_tanh(Strided<const float> x, Strided<float> out, Exec e = {});
void gelu_erf(Strided<const float> x, Strided<float> out, Exec e = {});
void silu(Strided<const float> x, Strided<float> out, Exec e = {});

// ---- reductions ----
// Compensated (Neumaier) sum; 0 for an empty span.
float sum(std::span<const float> x, Exec e = {});
float dot(std::span<const float> x, std::span<const float> y, Exec e = {});
float dot(Strided<const float> x, Strided<const float> y, Exec e = {});
// max/min/argmax/argmin: NaN propagates (first NaN wins); ties go to the first index. Empty: InvalidArgument.
float max(std::span<const float> x, Exec e = {});
float min(std::span<const float> x, Exec e = {});
std::size_t argmax(std::span<const float> x, Exec e = {});
std::size_t argmin(std::span<const float> x, Exec e = {});
float norm_l2(std::span<const float> x, Exec e = {});
// mean and population variance (divide by n); empty: InvalidArgument.
float mean(std::span<const float> x, Exec e = {});
float variance(std::span<const float> x, Exec e = {});
// Strided reductions (gathered once into contiguous scratch).
float sum(Strided<const float> x, Exec e = {});
float max(Strided<const float> x, Exec e = {});
float min(Strided<const float> x, Exec e = {});
std::size_t argmax(Strided<const float> x, Exec e = {});
std::size_t argmin(Strided<const float> x, Exec e = {});
float norm_l2(Strided<const float> x, Exec e = {});
float mean(Strided<const float> x, Exec e = {});
float variance(Strided<const float> x, Exec e = {});

// ---- row-wise ----
void softmax(std::span<const float> x, std::span<float> out, Exec e = {});
void log_softmax(std::span<const float> x, std::span<float> out, Exec e = {});
// out = x / sqrt(mean(x^2) + eps) * weight
void rmsnorm(std::span<const float> x, std::span<const float> weight, float eps, std::span<float> out, Exec e = {});
// out = (x - mean) / sqrt(var + eps) * weight + bias
void layernorm(std::span<const float> x, std::span<const float> weight, std::span<const float> bias, float eps,
               std::span<float> out, Exec e = {});

// ---- conversions (round to nearest even; NaN stays NaN) ----
void f32_to_f16(std::span<const float> x, std::span<std::uint16_t> out, Exec e = {});
void f16_to_f32(std::span<const std::uint16_t> x, std::span<float> out, Exec e = {});
void f32_to_bf16(std::span<const float> x, std::span<std::uint16_t> out, Exec e = {});
void bf16_to_f32(std::span<const std::uint16_t> x, std::span<float> out, Exec e = {});

// ---- matrices (row-major, leading dimensions in elements) ----
// C[m][n] = A[m][k] * B[k][n]; multithreaded (trueno::num_threads()).
void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
            std::size_t ldb, float* c, std::size_t ldc, Exec e = {});
// y[m] = A[m][k] * x[k]
void matvec(std::size_t m, std::size_t k, const float* a, std::size_t lda, std::span<const float> x,
            std::span<float> y, Exec e = {});
// B[cols][rows] = A[rows][cols]^T
void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb,
               Exec e = {});

}  // namespace ops
}  // namespace trueno
