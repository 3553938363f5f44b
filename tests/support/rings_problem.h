// The toy training problem of the training tests (src/grad/train_test.cpp on the CPU tiers,
// tests/support/device_train_case.h on devices): points on two concentric rings (inner: class 0, outer:
// class 1), a 2 -> 32 (tanh) -> 2 network from fixed initial weights, mean cross-entropy over 128 points,
// AdamW, 300 full-batch steps. Bound: mean loss <= 0.05 and every point classified right (measured ~0.01).
#pragma once
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "trueno/grad.h"

namespace trueno::test {

struct RingsNet {
  std::vector<float> w1, b1, w2, b2;  // [2][H], [H], [H][C], [C]
};

struct RingsProblem {
  static constexpr std::size_t N = 128, H = 32, C = 2, kSteps = 300;
  static constexpr float kMaxLoss = 0.05f;
  std::vector<float> X;          // [N][2]
  std::vector<std::size_t> Y;    // [N]
  RingsNet start;
  grad::AdamW opt;
};

inline RingsProblem make_rings_problem() {
  using P = RingsProblem;
  RingsProblem p;
  std::mt19937_64 rng(7);  // a fixed problem: the bound is about the training, not the draw
  std::uniform_real_distribution<float> angle(0.0f, 6.2831853f), jitter(-0.1f, 0.1f);
  p.X.resize(P::N * 2), p.Y.resize(P::N);
  for (std::size_t i = 0; i < P::N; ++i) {
    const float r = (i % 2 == 0 ? 0.5f : 1.5f) + jitter(rng), t = angle(rng);
    p.X[2 * i] = r * std::cos(t), p.X[2 * i + 1] = r * std::sin(t), p.Y[i] = i % 2;
  }
  std::normal_distribution<float> init(0.0f, 0.5f);
  p.start = {std::vector<float>(2 * P::H), std::vector<float>(P::H, 0.0f), std::vector<float>(P::H * P::C), std::vector<float>(P::C, 0.0f)};
  for (auto& v : p.start.w1) v = init(rng);
  for (auto& v : p.start.w2) v = init(rng);
  p.opt.lr = 0.02f, p.opt.weight_decay = 1e-4f;
  return p;
}

}  // namespace trueno::test
