// The thread pool: coverage, nesting, errors, and thread-count independence of results.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

class ThreadCount : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(saved_); }
  int saved_ = num_threads();
};

TEST_F(ThreadCount, EveryTaskRunsExactlyOnce) {
  for (int t : {1, 2, 3, 8}) {
    set_num_threads(t);
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(hits.size(), [&](std::size_t i) { hits[i]++; });
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "task " << i << " threads " << t;
  }
}

TEST_F(ThreadCount, NestedCallsRunSerially) {
  set_num_threads(4);
  std::atomic<int> total{0};
  parallel_for(8, [&](std::size_t) { parallel_for(8, [&](std::size_t) { total++; }); });
  EXPECT_EQ(total.load(), 64);
}

TEST_F(ThreadCount, ExceptionsReachTheCaller) {
  set_num_threads(3);
  EXPECT_THROW(parallel_for(10, [](std::size_t i) { if (i == 7) throw std::runtime_error("task 7"); }),
               std::runtime_error);
  std::atomic<int> after{0};
  parallel_for(10, [&](std::size_t) { after++; });  // the pool still works
  EXPECT_EQ(after.load(), 10);
}

TEST_F(ThreadCount, InvalidCountIsRejected) {
  EXPECT_THROW(set_num_threads(0), InvalidArgument);
  EXPECT_GE(physical_cores(), 1);
  EXPECT_GE(num_threads(), 1);
}

TEST_F(ThreadCount, LargeElementwiseOpsAreSplitAndBitIdentical) {
  const std::size_t n = (std::size_t{1} << 20) + 3;  // above the split threshold, ragged last chunk
  std::vector<float> x(n), one(n), many(n);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-20, 20);
  for (auto& v : x) v = d(rng);
  for (Backend be : available()) {
    set_num_threads(1);
    ops::silu(x, one, be);
    set_num_threads(4);
    ops::silu(x, many, be);
    ASSERT_EQ(0, std::memcmp(one.data(), many.data(), n * sizeof(float))) << name(be);
    std::vector<std::uint16_t> h1(n), h4(n);
    ops::f32_to_f16(x, h4, be);
    set_num_threads(1);
    ops::f32_to_f16(x, h1, be);
    ASSERT_EQ(h1, h4) << name(be);
  }
}

TEST_F(ThreadCount, MatmulIsIndependentOfThreadCount) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  Matrix a(300, 270), b(270, 310);
  for (std::size_t i = 0; i < a.rows() * a.cols(); ++i) a.data()[i] = d(rng);
  for (std::size_t i = 0; i < b.rows() * b.cols(); ++i) b.data()[i] = d(rng);
  for (Backend be : available()) {
    a.on(be), b.on(be);
    set_num_threads(1);
    const Matrix c1 = Matrix::matmul(a, b);
    set_num_threads(3);
    const Matrix c3 = Matrix::matmul(a, b);
    for (std::size_t i = 0; i < c1.rows() * c1.cols(); ++i)
      ASSERT_EQ(c1.data()[i], c3.data()[i]) << name(be) << " element " << i;
  }
}

}  // namespace
}  // namespace trueno
