// Element-wise semantics every backend must share (the contract test covers accuracy and agreement).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

using UnaryOp = void (*)(std::span<const float>, std::span<float>, Exec);

std::vector<float> apply(UnaryOp op, std::vector<float> x, Backend b) {
  std::vector<float> out(x.size());
  op(x, out, b);
  return out;
}

TEST(Elementwise, SpecialValueSemantics) {
  const float inf = INFINITY, nan = NAN;
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    auto r = apply(UnaryOp{ops::relu}, {-0.0f, -1.0f, 2.0f, nan}, b);
    EXPECT_FALSE(std::signbit(r[0]));
    EXPECT_EQ(r[1], 0.0f);
    EXPECT_EQ(r[2], 2.0f);
    EXPECT_TRUE(std::isnan(r[3]));
    auto e = apply(UnaryOp{ops::exp}, {-inf, inf, 0.0f, nan, -110.0f, 89.0f, -100.0f}, b);
    EXPECT_EQ(e[0], 0.0f);
    EXPECT_EQ(e[1], inf);
    EXPECT_EQ(e[2], 1.0f);
    EXPECT_TRUE(std::isnan(e[3]));
    EXPECT_EQ(e[4], 0.0f);
    EXPECT_EQ(e[5], inf);
    EXPECT_GT(e[6], 0.0f);  // e^-100 = 3.7e-44 is a denormal, not flushed
    auto t = apply(UnaryOp{ops::tanh}, {-inf, inf, -0.0f, 1e-30f}, b);
    EXPECT_EQ(t[0], -1.0f);
    EXPECT_EQ(t[1], 1.0f);
    EXPECT_TRUE(std::signbit(t[2]));
    EXPECT_EQ(t[3], 1e-30f);
    auto s = apply(UnaryOp{ops::sigmoid}, {-inf, inf, 0.0f}, b);
    EXPECT_EQ(s[0], 0.0f);
    EXPECT_EQ(s[1], 1.0f);
    EXPECT_EQ(s[2], 0.5f);
    for (UnaryOp op : {UnaryOp{ops::silu}, UnaryOp{ops::gelu_tanh}, UnaryOp{ops::gelu_erf}}) {
      auto g = apply(op, {-inf, inf, 0.0f, nan}, b);
      EXPECT_EQ(g[0], 0.0f);
      EXPECT_EQ(g[1], inf);
      EXPECT_EQ(g[2], 0.0f);
      EXPECT_TRUE(std::isnan(g[3]));
    }
    std::vector<float> c{nan, -20.0f, 20.0f, 0.5f}, co(4);
    ops::clamp(c, -1.0f, 1.0f, co, b);
    EXPECT_TRUE(std::isnan(co[0]));
    EXPECT_EQ(co[1], -1.0f);
    EXPECT_EQ(co[2], 1.0f);
    EXPECT_EQ(co[3], 0.5f);
  }
}

TEST(Elementwise, KnownValues) {
  for (Backend b : available()) {
    SCOPED_TRACE(std::string(name(b)));
    EXPECT_NEAR(apply(UnaryOp{ops::gelu_erf}, {1.0f}, b)[0], 0.8413447f, 1e-6f);
    EXPECT_NEAR(apply(UnaryOp{ops::gelu_tanh}, {1.0f}, b)[0], 0.8411920f, 1e-6f);
    EXPECT_NEAR(apply(UnaryOp{ops::silu}, {2.0f}, b)[0], 1.7615942f, 1e-6f);
    std::vector<float> g{2.0f}, u{3.0f}, o(1);
    ops::swiglu(g, u, o, b);
    EXPECT_NEAR(o[0], 3.0f * 1.7615942f, 1e-5f);
    std::vector<float> x{2.0f}, y{3.0f}, z{1.0f};
    ops::fma(x, y, z, o, b);
    EXPECT_EQ(o[0], 7.0f);
  }
}

}  // namespace
}  // namespace trueno
