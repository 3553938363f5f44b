// Sampling: greedy is the argmax, the same seed gives the same tokens, and each filter keeps exactly
// the tokens it should (checked by drawing many times from a known distribution).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "realizar/sampler.h"
#include "trueno/error.h"

namespace realizar {
namespace {

// logits whose softmax is 0.5, 0.25, 0.125, 0.0625, ... over 8 tokens, token 3 first.
std::vector<float> halving_logits() {
  std::vector<float> l(8);
  const int order[8] = {3, 0, 6, 1, 7, 2, 5, 4};
  for (int r = 0; r < 8; ++r) l[order[r]] = -static_cast<float>(r) * std::log(2.0f);
  return l;
}

std::set<std::int32_t> drawn(SamplerOptions o, int n = 2000) {
  Sampler s(o);
  const auto l = halving_logits();
  std::set<std::int32_t> seen;
  for (int i = 0; i < n; ++i) seen.insert(s.sample(l, {}));
  return seen;
}

SamplerOptions plain() {
  SamplerOptions o;
  o.temperature = 1, o.top_k = 0, o.top_p = 1, o.min_p = 0, o.repeat_penalty = 1;
  return o;
}

TEST(Sampler, GreedyIsTheArgmaxAndRepetitionPenaltyMovesIt) {
  SamplerOptions o = plain();
  o.temperature = 0;
  const auto l = halving_logits();
  EXPECT_EQ(Sampler(o).sample(l, {}), 3);
  std::vector<float> pos = {2.0f, 1.9f, -1.0f};
  o.repeat_penalty = 1.1f;
  const std::vector<std::int32_t> history = {0};
  EXPECT_EQ(Sampler(o).sample(pos, history), 1);  // 2.0 / 1.1 < 1.9
}

TEST(Sampler, DefaultsHaveNoRepetitionPenaltySoTemperatureZeroIsPlainGreedy) {
  SamplerOptions o;  // llama.cpp's convention: --repeat-penalty defaults to 1 (off)
  o.temperature = 0;
  const std::vector<float> pos = {2.0f, 1.9f, -1.0f};
  const std::vector<std::int32_t> history = {0, 0, 0};
  EXPECT_EQ(Sampler(o).sample(pos, history), 0);  // a penalty of 1.1 (the former default) picks token 1
}

TEST(Sampler, SameSeedSameTokensOtherSeedOtherTokens) {
  SamplerOptions o = plain();
  const auto l = halving_logits();
  auto run = [&](std::uint64_t seed) {
    o.seed = seed;
    Sampler s(o);
    std::vector<std::int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(s.sample(l, out));
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(Sampler, FiltersKeepExactlyTheirTokens) {
  SamplerOptions o = plain();
  EXPECT_EQ(drawn(o).size(), 8u);  // all reachable without filters
  o.top_k = 2;
  EXPECT_EQ(drawn(o), (std::set<std::int32_t>{3, 0}));
  o = plain(), o.top_p = 0.7f;  // 0.5 + 0.25 reaches 0.7
  EXPECT_EQ(drawn(o), (std::set<std::int32_t>{3, 0}));
  o = plain(), o.min_p = 0.2f;  // keeps p >= 0.1: 0.5, 0.25, 0.125
  EXPECT_EQ(drawn(o), (std::set<std::int32_t>{3, 0, 6}));
}

TEST(Sampler, OutOfRangeOptionsAreErrors) {
  SamplerOptions o = plain();
  o.top_p = 0;
  EXPECT_THROW(Sampler{o}, trueno::InvalidArgument);
  o = plain(), o.temperature = -1;
  EXPECT_THROW(Sampler{o}, trueno::InvalidArgument);
  o = plain(), o.min_p = 1;
  EXPECT_THROW(Sampler{o}, trueno::InvalidArgument);
}

}  // namespace
}  // namespace realizar
