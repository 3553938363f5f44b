// The Vulkan decode attention (Note [Vulkan decode attention], ops.cpp) against the CPU forward pass's
// attention restated here: GQA groups, head sizes, positions inside one chunk, on a chunk edge and over
// many chunks, a dispatch bounded by a bucket above the position (label gpu; lavapipe in CI).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "trueno/ops.h"
#include "trueno/vulkan/ops.h"
#include "vulkan/vulkan_test_support.h"

namespace trueno::vulkan {
namespace {

using namespace testing;

// realizar's CPU attention for one head set at position pos (forward.cpp: q and the softmax weights
// rounded to f16, K and V from the f16 cache).
std::vector<float> cpu_attention(const std::vector<float>& q, const std::vector<std::uint16_t>& kc, const std::vector<std::uint16_t>& vc,
                                 std::size_t heads, std::size_t hd, std::size_t group, std::size_t kv_row, std::size_t pos) {
  const std::size_t n = pos + 1;
  std::vector<float> out(heads * hd), kf(kc.size()), vf(vc.size()), qh(hd), s(n);
  std::vector<std::uint16_t> half(std::max(n, hd));
  ops::f16_to_f32(kc, kf);
  ops::f16_to_f32(vc, vf);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t kvh = h / group;
    ops::f32_to_f16(std::span(q).subspan(h * hd, hd), std::span(half).first(hd));
    ops::f16_to_f32(std::span(half).first(hd), qh);
    for (std::size_t t = 0; t < n; ++t) {
      float dot = 0.0f;
      for (std::size_t d = 0; d < hd; ++d) dot += kf[t * kv_row + kvh * hd + d] * qh[d];
      s[t] = dot / std::sqrt(static_cast<float>(hd));
    }
    ops::softmax(s, s);
    ops::f32_to_f16(s, std::span(half).first(n));
    ops::f16_to_f32(std::span(half).first(n), s);
    for (std::size_t d = 0; d < hd; ++d) {
      float acc = 0.0f;
      for (std::size_t t = 0; t < n; ++t) acc += s[t] * vf[t * kv_row + kvh * hd + d];
      out[h * hd + d] = acc;
    }
  }
  return out;
}

TEST(VulkanGpu, AttentionDecodeMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 11);
  struct Shape {
    std::size_t heads, kv_heads, hd, n_ctx;
  };
  for (const Shape sh : {Shape{8, 8, 8, 80}, Shape{4, 2, 64, 300}, Shape{6, 1, 128, 130}, Shape{2, 2, 256, 70}}) {
    const std::size_t kv_row = sh.kv_heads * sh.hd, group = sh.heads / sh.kv_heads;
    std::vector<std::uint16_t> kc(sh.n_ctx * kv_row), vc(sh.n_ctx * kv_row);
    ops::f32_to_f16(random_vector(kc.size(), rng, 2.0f), kc);
    ops::f32_to_f16(random_vector(vc.size(), rng), vc);
    const auto q = random_vector(sh.heads * sh.hd, rng, 2.0f);
    Buffer dq = to_device(q), dk = to_device(kc), dv = to_device(vc), att(c, q.size() * 4);
    AttentionScratch scratch(c, sh.n_ctx, sh.heads, sh.hd);
    for (const std::size_t pos : {std::size_t{0}, std::size_t{63}, std::size_t{64}, sh.n_ctx - 1}) {
      // A bucket above the position: chunks past it must not count.
      const std::size_t positions = std::min(sh.n_ctx, (pos / 64 + 2) * 64);
      const int p = static_cast<int>(pos);
      Buffer dpos = to_device(&p, sizeof p);
      Recorder rec(c);
      rec.fill(att, 0x7fc00000u);  // NaN: every element must be written
      attention_decode(rec, dq, dk, dv, dpos, scratch, att, group, kv_row, positions);
      rec.submit();
      const std::string what = std::to_string(sh.heads) + "/" + std::to_string(sh.kv_heads) + " heads x " + std::to_string(sh.hd) +
                               " pos " + std::to_string(pos) + " of " + std::to_string(positions);
      expect_contract("attention_scores", from_device(att, q.size()), cpu_attention(q, kc, vc, sh.heads, sh.hd, group, kv_row, pos), what);
    }
  }
}

TEST(VulkanGpu, AttentionShapeErrorsAreNamed) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  AttentionScratch scratch(c, 64, 4, 64);
  Buffer q(c, 4 * 64 * 4), kc(c, 64 * 256 * 2), vc(c, 64 * 256 * 2), pos(c, 4), att(c, 4 * 64 * 4);
  Recorder rec(c);
  EXPECT_THROW(attention_decode(rec, q, kc, vc, pos, scratch, att, 1, 256, 65), ShapeError);  // beyond the scratch
  EXPECT_THROW(attention_decode(rec, q, kc, vc, pos, scratch, att, 3, 256, 64), ShapeError);  // 4 heads in groups of 3
  Buffer small(c, 16);
  EXPECT_THROW(attention_decode(rec, small, kc, vc, pos, scratch, att, 1, 256, 64), ShapeError);
}

}  // namespace
}  // namespace trueno::vulkan
