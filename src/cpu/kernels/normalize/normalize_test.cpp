// Row-wise normalization properties on every backend.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

TEST(Normalize, SoftmaxIsADistributionAndShiftInvariant) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    std::vector<float> x(77), p(77), q(77), lp(77);
    for (int i = 0; i < 77; ++i) x[i] = std::sin(i * 0.7f) * 20.0f;
    ops::softmax(x, p, b);
    EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-5);
    for (auto& v : x) v += 1000.0f;  // large logits must not overflow
    ops::softmax(x, q, b);
    for (int i = 0; i < 77; ++i) EXPECT_NEAR(p[i], q[i], 1e-4f * p[i] + 1e-12f);
    ops::log_softmax(x, lp, b);
    for (int i = 0; i < 77; ++i) EXPECT_NEAR(std::exp(lp[i]), q[i], 1e-5f);
  }
}

TEST(Normalize, RmsNormAndLayerNorm) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w(9, 2.0f), bias(9, 0.5f), out(9);
    ops::rmsnorm(x, w, 0.0f, out, b);
    const float rms = std::sqrt(285.0f / 9.0f);
    for (int i = 0; i < 9; ++i) EXPECT_NEAR(out[i], 2.0f * x[i] / rms, 1e-5f);
    ops::layernorm(x, w, bias, 0.0f, out, b);
    double mean = 0, var = 0;
    for (float v : out) mean += (v - 0.5) / 2.0;
    mean /= 9;
    for (float v : out) var += ((v - 0.5) / 2.0 - mean) * ((v - 0.5) / 2.0 - mean);
    EXPECT_NEAR(mean, 0.0, 1e-6);
    EXPECT_NEAR(var / 9, 1.0, 1e-5);
  }
}

}  // namespace
}  // namespace trueno
