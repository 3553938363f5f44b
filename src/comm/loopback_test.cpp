// The loopback communicator: sums in rank order on every rank (Note [Loopback reduction order]), the
// all-gather's layout, and a failing rank releasing the others.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "trueno/comm.h"
#include "trueno/error.h"

namespace trueno {
namespace {

// Runs body(rank's communicator) on one thread per rank; rethrows nothing (the bodies EXPECT).
template <class Body>
void on_ranks(std::vector<std::unique_ptr<Communicator>>& group, Body body) {
  std::vector<std::thread> threads;
  for (auto& c : group) threads.emplace_back([&body, &c] { body(*c); });
  for (auto& t : threads) t.join();
}

TEST(LoopbackComm, AllReduceSumsInRankOrderOnEveryRank) {
  for (int n : {1, 2, 3, 4}) {
    constexpr std::size_t kLen = 1000;
    std::mt19937 rng(42 + n);
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    std::vector<std::vector<float>> data(n, std::vector<float>(kLen));
    for (auto& v : data)
      for (float& x : v) x = dist(rng) * (dist(rng) > 0 ? 1e-4f : 1.0f);  // mixed magnitudes: order matters
    std::vector<float> want(kLen);
    for (std::size_t i = 0; i < kLen; ++i) {
      float acc = data[0][i];
      for (int r = 1; r < n; ++r) acc += data[r][i];
      want[i] = acc;
    }
    auto group = loopback_group(n);
    on_ranks(group, [&](Communicator& c) {
      for (int round = 0; round < 3; ++round) {  // reuse: the barriers keep rounds apart
        std::vector<float> mine = data[c.rank()];
        c.all_reduce_sum(mine.data(), kLen);
        EXPECT_EQ(0, std::memcmp(mine.data(), want.data(), kLen * sizeof(float))) << "rank " << c.rank() << " of " << n;
      }
    });
  }
}

TEST(LoopbackComm, AllGatherPutsRankRAtRTimesN) {
  constexpr int kRanks = 4;
  constexpr std::size_t kLen = 5;
  auto group = loopback_group(kRanks);
  on_ranks(group, [&](Communicator& c) {
    std::vector<float> in(kLen), out(kRanks * kLen);
    for (std::size_t i = 0; i < kLen; ++i) in[i] = static_cast<float>(c.rank() * 100 + static_cast<int>(i));
    c.all_gather(in.data(), out.data(), kLen);
    for (int r = 0; r < kRanks; ++r)
      for (std::size_t i = 0; i < kLen; ++i) EXPECT_EQ(out[r * kLen + i], static_cast<float>(r * 100 + static_cast<int>(i)));
  });
}

TEST(LoopbackComm, AFailingRankReleasesTheOthers) {
  auto group = loopback_group(3);
  std::vector<std::string> errors(3);
  on_ranks(group, [&](Communicator& c) {
    if (c.rank() == 1) {
      c.abort();  // as a rank whose forward threw would
      return;
    }
    float x = 1.0f;
    try {
      c.all_reduce_sum(&x, 1);
    } catch (const Error& e) {
      errors[c.rank()] = e.what();
    }
  });
  EXPECT_NE(errors[0].find("rank 1 of the group failed"), std::string::npos) << errors[0];
  EXPECT_NE(errors[2].find("rank 1 of the group failed"), std::string::npos) << errors[2];
}

TEST(LoopbackComm, RefusesAnEmptyGroup) { EXPECT_THROW(loopback_group(0), InvalidArgument); }

}  // namespace
}  // namespace trueno
