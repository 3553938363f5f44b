// Reduction semantics every backend must share: NaN and tie rules, compensation, infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

TEST(Reduce, TiesGoToTheFirstIndexAndNaNWins) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    std::vector<float> v(100, 1.0f);
    v[37] = 5.0f, v[80] = 5.0f, v[12] = -3.0f, v[90] = -3.0f;
    EXPECT_EQ(ops::argmax(v, b), 37u);
    EXPECT_EQ(ops::argmin(v, b), 12u);
    EXPECT_EQ(ops::max(v, b), 5.0f);
    EXPECT_EQ(ops::min(v, b), -3.0f);
    v[60] = NAN, v[70] = NAN;
    EXPECT_EQ(ops::argmax(v, b), 60u);
    EXPECT_EQ(ops::argmin(v, b), 60u);
    EXPECT_TRUE(std::isnan(ops::max(v, b)));
    EXPECT_TRUE(std::isnan(ops::sum(v, b)));
    std::vector<float> neg(33, -7.0f);
    neg[32] = -1.0f;  // the maximum sits in the tail
    EXPECT_EQ(ops::argmax(neg, b), 32u);
  }
}

TEST(Reduce, SumIsCompensated) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    // Naive f32 summation returns 0 here (1 is lost against 1e8 in every lane and order).
    std::vector<float> v;
    for (int i = 0; i < 64; ++i) v.push_back(1e8f), v.push_back(1.0f), v.push_back(-1e8f);
    EXPECT_EQ(ops::sum(v, b), 64.0f);
    EXPECT_EQ(ops::mean(v, b), 64.0f / 192.0f);
    std::vector<float> w{1.0f, INFINITY, 2.0f};
    EXPECT_EQ(ops::sum(w, b), INFINITY);
    w.push_back(-INFINITY);
    EXPECT_TRUE(std::isnan(ops::sum(w, b)));
  }
}

TEST(Reduce, VarianceIsPopulationVariance) {
  for (Backend b : available()) {
    std::vector<float> v{2, 4, 4, 4, 5, 5, 7, 9};
    EXPECT_FLOAT_EQ(ops::variance(v, b), 4.0f) << name(b);
    std::vector<float> c(1000, 1e4f);  // constant data: exactly zero
    EXPECT_EQ(ops::variance(c, b), 0.0f) << name(b);
  }
}

}  // namespace
}  // namespace trueno
