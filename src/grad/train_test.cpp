// A two-layer network trained with the backward ops (include/trueno/grad.h) on every available CPU tier:
// the rings problem of tests/support/rings_problem.h (its bound: mean loss <= 0.05, every point right).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "support/rings_problem.h"
#include "trueno/backend.h"
#include "trueno/grad.h"

namespace trueno::grad {
namespace {

using Net = test::RingsNet;

TEST(Train, TwoLayerNetworkLearnsTheRingsOnEveryTier) {
  const test::RingsProblem prob = test::make_rings_problem();
  constexpr std::size_t N = test::RingsProblem::N, H = test::RingsProblem::H, C = test::RingsProblem::C, kSteps = test::RingsProblem::kSteps;
  const std::vector<float>& X = prob.X;
  const std::vector<std::size_t>& Y = prob.Y;
  const Net& start = prob.start;
  const AdamW& opt = prob.opt;

  for (Backend b : available()) {
    const Exec e = b;
    Net net = start, m1{std::vector<float>(2 * H), std::vector<float>(H), std::vector<float>(H * C), std::vector<float>(C)}, v1 = m1;
    for (auto* p : {&m1.w1, &m1.b1, &m1.w2, &m1.b2, &v1.w1, &v1.b1, &v1.w2, &v1.b2}) std::fill(p->begin(), p->end(), 0.0f);
    std::vector<float> z1(N * H), h(N * H), z2(N * C), dz2(N * C), dh(N * H), dz1(N * H);
    Net g{std::vector<float>(2 * H), std::vector<float>(H), std::vector<float>(H * C), std::vector<float>(C)};
    float loss = 0;
    std::size_t right = 0;
    for (std::size_t step = 1; step <= kSteps + 1; ++step) {
      // forward: h = tanh(X W1 + b1), z2 = h W2 + b2
      ops::matmul(N, H, 2, X.data(), 2, net.w1.data(), H, z1.data(), H, e);
      for (std::size_t i = 0; i < N; ++i) ops::add(std::span<const float>(z1.data() + i * H, H), net.b1, std::span<float>(z1.data() + i * H, H), e);
      ops::tanh(z1, h, e);
      ops::matmul(N, C, H, h.data(), H, net.w2.data(), C, z2.data(), C, e);
      loss = 0, right = 0;
      for (std::size_t i = 0; i < N; ++i) {
        std::span<float> zi(z2.data() + i * C, C);
        ops::add(zi, net.b2, zi, e);
        loss += cross_entropy(zi, Y[i], std::span<float>(dz2.data() + i * C, C), 1.0f / N, e) / N;
        right += ops::argmax(zi, e) == Y[i];
      }
      if (step > kSteps) break;  // the last forward only measures
      // backward
      matmul(N, C, H, h.data(), net.w2.data(), dz2.data(), dh.data(), g.w2.data(), false, e);
      std::fill(g.b2.begin(), g.b2.end(), 0.0f);
      for (std::size_t i = 0; i < N; ++i)
        for (std::size_t c = 0; c < C; ++c) g.b2[c] += dz2[i * C + c];
      grad::tanh(h, dh, dz1, e);
      matmul(N, H, 2, X.data(), net.w1.data(), dz1.data(), nullptr, g.w1.data(), false, e);
      std::fill(g.b1.begin(), g.b1.end(), 0.0f);
      for (std::size_t i = 0; i < N; ++i) ops::add(std::span<const float>(g.b1), std::span<const float>(dz1.data() + i * H, H), g.b1, e);
      adamw_step(net.w1, g.w1, m1.w1, v1.w1, step, opt);
      adamw_step(net.b1, g.b1, m1.b1, v1.b1, step, opt);
      adamw_step(net.w2, g.w2, m1.w2, v1.w2, step, opt);
      adamw_step(net.b2, g.b2, m1.b2, v1.b2, step, opt);
    }
    std::printf("train %s: mean loss %.4f after %zu steps, %zu/%zu right\n", std::string(name(b)).c_str(), loss, kSteps, right, N);
    EXPECT_LE(loss, test::RingsProblem::kMaxLoss) << name(b);
    EXPECT_EQ(right, N) << name(b);
  }
}

}  // namespace
}  // namespace trueno::grad
