// GEMM, matvec and transpose scalar references: textbook loops, sums in order of increasing p.
#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu::scalar::kernels {

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
            std::size_t ldb, float* c, std::size_t ldc) {
  for (std::size_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    for (std::size_t j = 0; j < n; ++j) ci[j] = 0.0f;
    for (std::size_t p = 0; p < k; ++p) {
      const float aip = a[i * lda + p];
      const float* bp = b + p * ldb;
      for (std::size_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

void matvec(std::size_t m, std::size_t k, const float* a, std::size_t lda, const float* x, float* y) {
  for (std::size_t i = 0; i < m; ++i) y[i] = dot(a + i * lda, x, k);
}

void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) b[j * ldb + i] = a[i * lda + j];
}

}  // namespace trueno::cpu::scalar::kernels
