// Sampling: greedy is the argmax, the same seed gives the same tokens, and each filter keeps exactly
// the tokens it should (checked by drawing many times from a known distribution); sample() equals its
// two halves (penalty and ranking, then draw), which a device sequence splits between device and host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
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

TEST(Sampler, GreedyFollowsTheMinElementRuleForTiesAndNaN) {  // Note [Greedy ties and NaN]
  SamplerOptions o = plain();
  o.temperature = 0;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const auto greedy = [&](std::vector<float> l) { return Sampler(o).sample(l, {}); };
  EXPECT_EQ(greedy({1.0f, 3.0f, 2.0f, 3.0f}), 1);   // the lowest id among equal maxima
  EXPECT_EQ(greedy({-0.0f, 0.0f, -1.0f}), 0);       // -0 equals +0
  EXPECT_EQ(greedy({0.0f, -0.0f, -1.0f}), 0);
  EXPECT_EQ(greedy({-inf, -inf, -inf}), 0);
  EXPECT_EQ(greedy({1.0f, nan, 3.0f, nan}), 2);     // NaN after id 0 never wins
  EXPECT_EQ(greedy({-inf, nan, nan}), 0);
  EXPECT_EQ(greedy({nan, 5.0f, inf}), 0);           // NaN at id 0 is never replaced
  EXPECT_EQ(greedy({2.0f, inf, inf}), 1);
}

TEST(Sampler, PenalizedAreTheDistinctRecentTokensInTheVocabulary) {
  SamplerOptions o = plain();
  EXPECT_TRUE(Sampler(o).penalized(std::vector<std::int32_t>{1, 2, 3}, 10).empty());  // penalty 1: off
  o.repeat_penalty = 1.3f, o.repeat_last_n = 3;
  const std::vector<std::int32_t> history = {9, 8, 5, 3, 5, -1, 12, 3};
  EXPECT_EQ(Sampler(o).penalized(history, 10), (std::vector<std::int32_t>{3}));  // -1 and 12 are outside [0, 10)
  o.repeat_last_n = 6;
  EXPECT_EQ(Sampler(o).penalized(history, 10), (std::vector<std::int32_t>{5, 3}));
  o.repeat_last_n = -1;  // the whole history
  EXPECT_EQ(Sampler(o).penalized(history, 10), (std::vector<std::int32_t>{9, 8, 5, 3}));
  EXPECT_FLOAT_EQ(Sampler(o).penalize(2.6f), 2.0f);
  EXPECT_FLOAT_EQ(Sampler(o).penalize(-2.0f), -2.6f);
  EXPECT_EQ(Sampler(o).penalize(0.0f), 0.0f);
}

TEST(Sampler, CandidatesAreTopKOrTheWholeVocabulary) {
  SamplerOptions o = plain();
  EXPECT_EQ(Sampler(o).candidates(100), 100u);  // top_k 0
  o.top_k = 40;
  EXPECT_EQ(Sampler(o).candidates(100), 40u);
  EXPECT_EQ(Sampler(o).candidates(40), 40u);
  EXPECT_EQ(Sampler(o).candidates(30), 30u);
}

// What a device sequence does (Note [Sampling on the device]): it penalizes and ranks where the logits
// are, here restated with a full sort instead of partial_sort, and hands the best candidates to draw().
// The tokens must equal sample()'s from the same seed, step after step (one generator draw each).
TEST(Sampler, TheTwoHalvesDrawWhatSampleDraws) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> level(-6, 6);
  for (const int top_k : {0, 1, 5, 40, 300}) {
    SamplerOptions o;
    o.temperature = 0.8f, o.top_k = top_k, o.top_p = 0.9f, o.min_p = 0.02f, o.repeat_penalty = 1.1f, o.repeat_last_n = 16, o.seed = 11;
    Sampler whole(o), halves(o);
    std::vector<std::int32_t> history;
    for (int step = 0; step < 200; ++step) {
      std::vector<float> logits(257);
      for (float& l : logits) l = static_cast<float>(level(rng)) * 0.5f;  // many ties
      logits[3] = -std::numeric_limits<float>::infinity();
      const std::int32_t want = whole.sample(logits, history);

      std::vector<Sampler::Candidate> c(logits.size());
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = {logits[i], static_cast<std::int32_t>(i)};
      for (const std::int32_t id : halves.penalized(history, c.size())) c[id].first = halves.penalize(c[id].first);
      std::sort(c.begin(), c.end(), Sampler::better);
      const std::int32_t got = halves.draw(std::span(c).first(halves.candidates(c.size())));
      ASSERT_EQ(got, want) << "top_k " << top_k << ", step " << step;
      history.push_back(want);
    }
  }
}

// Note [Ranking the whole vocabulary]: the radix ranking of large candidate sets must give partial_sort's
// order exactly (ties by id, -0 as +0, infinities), and sample() over a large vocabulary the tokens of a
// full std::sort followed by draw().
TEST(Sampler, RadixRankingEqualsPartialSort) {
  const std::uint64_t seed = 20261201;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> level(-40, 40);
  std::normal_distribution<float> wide(0.0f, 30.0f);
  for (const std::size_t V : {1025u, 5000u, 32000u, 152064u}) {
    for (const std::size_t n : {V, V - 1, std::size_t{1025}, std::size_t{4000}}) {
      if (n > V) continue;
      std::vector<Sampler::Candidate> a(V), scratch;
      for (std::size_t i = 0; i < V; ++i) {
        float l = (i % 3 == 0) ? static_cast<float>(level(rng)) * 0.25f : wide(rng);  // many ties, and a wide range
        if (i % 97 == 0) l = -0.0f;
        if (i % 89 == 0) l = 0.0f;
        if (i % 1001 == 0) l = -std::numeric_limits<float>::infinity();
        if (i == 7) l = std::numeric_limits<float>::infinity();
        a[i] = {l, static_cast<std::int32_t>(i)};
      }
      auto want = a;
      std::partial_sort(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(n), want.end(), Sampler::better);
      Sampler::rank_candidates(a, n, scratch);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(a[i].second, want[i].second) << "V " << V << ", n " << n << ", rank " << i;
        ASSERT_EQ(std::memcmp(&a[i].first, &want[i].first, sizeof(float)), 0) << "V " << V << ", rank " << i;
      }
    }
  }
}

TEST(Sampler, LargeVocabularyDrawsWhatAFullSortDraws) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> level(-60, 20);
  for (const int top_k : {0, 3000}) {  // top_p just below 1: the ranked path (Note [Temperature alone])
    SamplerOptions o;
    o.temperature = 0.8f, o.top_k = top_k, o.top_p = 0.999f, o.min_p = 0.0f, o.repeat_penalty = 1.1f, o.seed = 3;
    if (top_k != 0) o.top_p = 0.95f, o.min_p = 0.01f;
    Sampler whole(o), halves(o);
    std::vector<std::int32_t> history;
    for (int step = 0; step < 40; ++step) {
      std::vector<float> logits(32000);
      for (float& l : logits) l = static_cast<float>(level(rng)) * 0.125f;
      const std::int32_t want = whole.sample(logits, history);
      std::vector<Sampler::Candidate> c(logits.size());
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = {logits[i], static_cast<std::int32_t>(i)};
      for (const std::int32_t id : halves.penalized(history, c.size())) c[id].first = halves.penalize(c[id].first);
      std::sort(c.begin(), c.end(), Sampler::better);
      ASSERT_EQ(halves.draw(std::span(c).first(halves.candidates(c.size()))), want) << "top_k " << top_k << ", step " << step;
      history.push_back(want);
    }
  }
}

// Note [Temperature alone]: the draw in id order follows softmax(logits / T): halving_logits' 0.5, 0.25,
// ... at T = 1, and at T = 0.5 the squares renormalized; a count more than 5 standard deviations from
// its expectation fails. With a NaN the ranked path stays (the same token as ranking first).
TEST(Sampler, TemperatureAloneDrawsTheSoftmaxDistribution) {
  const std::uint64_t seed = 777;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  const auto l = halving_logits();
  const int order[8] = {3, 0, 6, 1, 7, 2, 5, 4};
  for (const float t : {1.0f, 0.5f}) {
    SamplerOptions o = plain();
    o.temperature = t, o.seed = seed;
    Sampler s(o);
    const int n = 40000;
    std::vector<int> count(8, 0);
    for (int i = 0; i < n; ++i) ++count[s.sample(l, {})];
    double z = 0;
    for (int r = 0; r < 8; ++r) z += std::pow(0.5, r / t);
    for (int r = 0; r < 8; ++r) {
      const double p = std::pow(0.5, r / t) / z, sd = std::sqrt(n * p * (1 - p));
      EXPECT_NEAR(count[order[r]], n * p, 5 * sd + 1) << "T " << t << ", token " << order[r];
    }
  }
  auto with_nan = l;
  with_nan[2] = std::numeric_limits<float>::quiet_NaN();
  SamplerOptions o = plain();
  Sampler a(o), b(o);
  std::vector<Sampler::Candidate> c(with_nan.size()), scratch;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = {with_nan[i], static_cast<std::int32_t>(i)};
  Sampler::rank_candidates(c, c.size(), scratch);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.sample(with_nan, {}), b.draw(std::span(c))) << "draw " << i;
}

TEST(Sampler, NaNKeepsThePartialSortRanking) {
  std::vector<Sampler::Candidate> a(3000), scratch;
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = {static_cast<float>(i % 17), static_cast<std::int32_t>(i)};
  a[5].first = std::numeric_limits<float>::quiet_NaN();
  auto want = a;
  std::partial_sort(want.begin(), want.end(), want.end(), Sampler::better);
  Sampler::rank_candidates(a, a.size(), scratch);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].second, want[i].second) << "rank " << i;
}

}  // namespace
}  // namespace realizar
