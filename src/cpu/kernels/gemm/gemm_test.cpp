// GEMM/matvec/transpose behaviour the contract test does not cover: strides, C untouched outside
// its view, shapes around every micro-kernel edge.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

TEST(Gemm, RespectsLeadingDimensionsAndLeavesPaddingAlone) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-3, 3);  // small integers: exact in f32 at these sizes
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    for (std::size_t m : {1, 5, 13, 29}) {
      const std::size_t n = 2 * m + 3, k = 300, lda = k + 5, ldb = n + 7, ldc = n + 2;
      std::vector<float> a(m * lda), bm(k * ldb), c(m * ldc, 99.0f);
      for (auto& v : a) v = static_cast<float>(d(rng));
      for (auto& v : bm) v = static_cast<float>(d(rng));
      ops::matmul(m, n, k, a.data(), lda, bm.data(), ldb, c.data(), ldc, b);
      for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          float want = 0;
          for (std::size_t p = 0; p < k; ++p) want += a[i * lda + p] * bm[p * ldb + j];
          ASSERT_EQ(c[i * ldc + j], want) << i << "," << j;
        }
        for (std::size_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], 99.0f) << "padding written";
      }
    }
  }
}

TEST(Gemm, MatvecAndTransposeWithStrides) {
  for (Backend b : available()) {
    const std::size_t m = 19, k = 23, lda = 30;
    std::vector<float> a(m * lda), x(k), y(m), t(k * (m + 4), -1.0f);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
    for (std::size_t i = 0; i < k; ++i) x[i] = static_cast<float>(i % 5);
    ops::matvec(m, k, a.data(), lda, x, y, b);
    ops::transpose(m, k, a.data(), lda, t.data(), m + 4, b);
    for (std::size_t i = 0; i < m; ++i) {
      float want = 0;
      for (std::size_t p = 0; p < k; ++p) want += a[i * lda + p] * x[p];
      EXPECT_EQ(y[i], want) << name(b);
      for (std::size_t p = 0; p < k; ++p) ASSERT_EQ(t[p * (m + 4) + i], a[i * lda + p]) << name(b);
    }
    EXPECT_EQ(t[m], -1.0f) << "transpose wrote past its rows";
    EXPECT_THROW(ops::matmul(2, 2, 2, a.data(), 1, a.data(), 2, y.data(), 2, b), ShapeError);
  }
}

}  // namespace
}  // namespace trueno
