// Known f16/bf16 encodings on every backend (the contract test checks all 65536 halves).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "trueno/trueno.h"

namespace trueno {
namespace {

TEST(Convert, KnownHalfEncodings) {
  const std::vector<float> x{1.0f, -2.0f, 65504.0f, 65519.0f, 65520.0f, 5.9604645e-08f, 2.9802322e-08f,
                             0.0f, -0.0f, INFINITY, 1.0009766f, 1.00048828125f};
  const std::vector<std::uint16_t> want{0x3c00, 0xc000, 0x7bff, 0x7bff, 0x7c00, 0x0001, 0x0000,
                                        0x0000, 0x8000, 0x7c00, 0x3c01, 0x3c00 /* tie to even */};
  for (Backend b : available()) {
    std::vector<std::uint16_t> h(x.size());
    ops::f32_to_f16(x, h, b);
    EXPECT_EQ(h, want) << name(b);
    std::vector<float> back(x.size());
    ops::f16_to_f32(h, back, b);
    EXPECT_EQ(back[5], 5.9604645e-08f) << name(b);
    EXPECT_EQ(back[4], INFINITY) << name(b);
  }
}

TEST(Convert, KnownBf16Encodings) {
  const std::vector<float> x{1.0f, -2.0f, 1.00390625f, 1.01171875f, NAN, INFINITY, 3.4e38f};
  for (Backend b : available()) {
    std::vector<std::uint16_t> h(x.size());
    ops::f32_to_bf16(x, h, b);
    EXPECT_EQ(h[0], 0x3f80) << name(b);
    EXPECT_EQ(h[1], 0xc000) << name(b);
    EXPECT_EQ(h[2], 0x3f80) << name(b);  // exact tie -> even
    EXPECT_EQ(h[3], 0x3f82) << name(b);  // tie -> even (up)
    EXPECT_EQ(h[4] & 0x7fc0, 0x7fc0) << name(b);
    EXPECT_EQ(h[5], 0x7f80) << name(b);
    EXPECT_EQ(h[6], 0x7f80) << name(b);  // rounds past the largest bf16
  }
}

}  // namespace
}  // namespace trueno
