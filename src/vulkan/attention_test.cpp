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

// A prompt's rows in one dispatch each (rows consecutive positions from pos): attention row r equals the
// single-row attention at pos + r; rope rotates row r by pos + r; kv_append fills slots pos..pos+rows-1;
// add_bias adds the bias to every row.
TEST(VulkanGpu, PromptRowsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  Context& c = test_context();
  std::mt19937_64 rng(test_seed() + 12);
  const std::size_t heads = 4, kv_heads = 2, hd = 64, n_ctx = 200, rows = 5, kv_row = kv_heads * hd, group = heads / kv_heads;
  std::vector<std::uint16_t> kc(n_ctx * kv_row), vc(n_ctx * kv_row);
  ops::f32_to_f16(random_vector(kc.size(), rng, 2.0f), kc);
  ops::f32_to_f16(random_vector(vc.size(), rng), vc);
  const auto q = random_vector(rows * heads * hd, rng, 2.0f);
  Buffer dq = to_device(q), dk = to_device(kc), dv = to_device(vc), att(c, q.size() * 4);
  AttentionScratch scratch(c, n_ctx, heads, hd, rows);
  for (const std::size_t pos : {std::size_t{0}, std::size_t{61}, std::size_t{130}}) {
    const int p = static_cast<int>(pos);
    Buffer dpos = to_device(&p, sizeof p);
    Recorder rec(c);
    rec.fill(att, 0x7fc00000u);
    attention_decode(rec, dq, dk, dv, dpos, scratch, att, group, kv_row, std::min(n_ctx, (pos + rows + 63) / 64 * 64), rows);
    rec.submit();
    const auto got = from_device(att, q.size());
    // The same rows in two pieces through the scratch (row0: rows 0-2, then 3-4) give the same output.
    Recorder pieces(c);
    pieces.fill(att, 0x7fc00000u);
    const std::size_t positions = std::min(n_ctx, (pos + rows + 63) / 64 * 64);
    attention_decode(pieces, dq, dk, dv, dpos, scratch, att, group, kv_row, positions, 3, 0);
    attention_decode(pieces, dq, dk, dv, dpos, scratch, att, group, kv_row, positions, 2, 3);
    pieces.submit();
    const auto in_pieces = from_device(att, q.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(in_pieces[i], got[i]) << "value " << i << " from pos " << pos;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<float> qr(q.begin() + r * heads * hd, q.begin() + (r + 1) * heads * hd);
      expect_contract("attention_scores", std::vector<float>(got.begin() + r * heads * hd, got.begin() + (r + 1) * heads * hd),
                      cpu_attention(qr, kc, vc, heads, hd, group, kv_row, pos + r), "row " + std::to_string(r) + " of 5 from pos " + std::to_string(pos));
    }
  }
  // rope and kv_append over rows, against the single-row dispatches at each row's position.
  const auto x = random_vector(rows * heads * hd, rng);
  const RopeParams rp{static_cast<int>(hd), static_cast<int>(hd), std::pow(10000.0f, -2.0f / hd), nullptr, false};
  const int p0 = 7;
  Buffer dx = to_device(x), dpos = to_device(&p0, sizeof p0), kc2(c, n_ctx * kv_row * 2), vc2(c, n_ctx * kv_row * 2);
  Buffer kin = to_device(std::vector<float>(x.begin(), x.begin() + rows * kv_row)), vin = to_device(std::vector<float>(x.end() - rows * kv_row, x.end()));
  Recorder rec(c);
  rope(rec, dx, static_cast<int>(heads), dpos, rp, rows);
  rec.fill(kc2, 0), rec.fill(vc2, 0);
  kv_append(rec, kin, vin, kc2, vc2, dpos, kv_row, rows);
  rec.submit();
  const auto rotated = from_device(dx, x.size());
  const auto kgot = from_device<std::uint16_t>(kc2, n_ctx * kv_row), vgot = from_device<std::uint16_t>(vc2, n_ctx * kv_row);
  for (std::size_t r = 0; r < rows; ++r) {
    const int pr = p0 + static_cast<int>(r);
    Buffer one = to_device(std::vector<float>(x.begin() + r * heads * hd, x.begin() + (r + 1) * heads * hd)), dpr = to_device(&pr, sizeof pr);
    Recorder single(c);
    rope(single, one, static_cast<int>(heads), dpr, rp);
    single.submit();
    expect_contract("rope", std::vector<float>(rotated.begin() + r * heads * hd, rotated.begin() + (r + 1) * heads * hd), from_device(one, heads * hd),
                    "row " + std::to_string(r) + " against one row at its position");
    std::vector<std::uint16_t> kw(kv_row), vw(kv_row);
    ops::f32_to_f16(std::span(x).subspan(r * kv_row, kv_row), kw);
    ops::f32_to_f16(std::span(x).subspan(x.size() - rows * kv_row + r * kv_row, kv_row), vw);
    for (std::size_t i = 0; i < kv_row; ++i) {
      ASSERT_EQ(kgot[(pr * kv_row) + i], kw[i]) << "k row " << r << " value " << i;
      ASSERT_EQ(vgot[(pr * kv_row) + i], vw[i]) << "v row " << r << " value " << i;
    }
  }
  EXPECT_EQ(kgot[(p0 - 1) * kv_row], 0u) << "the slot before the rows is untouched";
  EXPECT_EQ(kgot[(p0 + rows) * kv_row], 0u) << "the slot after the rows is untouched";
  // add_bias: every row plus the bias, through the module built from the CUDA kernel, then the
  // hand-written one; rows of 64 values (one part of a workgroup) and of 300 (one and a part).
  for (bool decy : {true, false}) {
    c.set_decy_shaders(decy);
    for (const std::size_t n : {hd, std::size_t{300}}) {
      const std::size_t bias_rows = x.size() / n;
      const auto b = random_vector(n, rng);
      Buffer dy = to_device(x), db = to_device(b);
      Recorder brec(c);
      add_bias(brec, dy, db, bias_rows, n);
      brec.submit();
      std::vector<float> want = x;
      for (std::size_t i = 0; i < bias_rows * n; ++i) want[i] += b[i % n];
      expect_contract("add", from_device(dy, x.size()), want,
                      "bias of " + std::to_string(n) + " over " + std::to_string(bias_rows) + " rows " + add_bias_module(c, bias_rows, n));
    }
  }
  c.set_decy_shaders(true);
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
