// The rings training (tests/support/rings_problem.h, on the CPU tiers in src/grad/train_test.cpp) with
// every tensor on a device: forward, backward and AdamW through trueno::ops / trueno::grad on DeviceTensor,
// nothing downloaded until the last forward. Biases go through ops::add_bias and grad::bias.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "support/rings_problem.h"
#include "trueno/device_ops.h"
#include "trueno/grad.h"

namespace trueno::test {

struct DeviceParam {
  DeviceTensor w, g, m, v;  // the weights, their gradient, AdamW's moments
  DeviceParam(const Device& d, const std::vector<float>& start, Shape shape) {
    const std::vector<float> zeros(start.size(), 0.0f);
    w = DeviceTensor::upload(d, start, shape), m = DeviceTensor::upload(d, zeros, shape), v = DeviceTensor::upload(d, zeros, shape);
  }
};

inline void check_rings_training(const Device& d) {
  using P = RingsProblem;
  constexpr std::size_t N = P::N, H = P::H, C = P::C;
  const RingsProblem prob = make_rings_problem();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int32_t> targets(N);
  for (std::size_t i = 0; i < N; ++i) targets[i] = static_cast<std::int32_t>(prob.Y[i]);
  const DeviceTensor X = DeviceTensor::upload(d, prob.X, {N, 2});
  const DeviceTensor Y = DeviceTensor::upload_ids(d, targets);
  DeviceParam w1(d, prob.start.w1, {2, H}), b1(d, prob.start.b1, {1, H}), w2(d, prob.start.w2, {H, C}), b2(d, prob.start.b2, {1, C});
  DeviceTensor z1, h, z2, loss, dz2, dh, dz1;
  for (std::size_t step = 1; step <= P::kSteps + 1; ++step) {
    // forward: h = tanh(X W1 + b1), z2 = h W2 + b2 (biases added to every row)
    ops::matmul(X, w1.w, z1), ops::add_bias(z1, b1.w, z1), ops::tanh(z1, h);
    ops::matmul(h, w2.w, z2), ops::add_bias(z2, b2.w, z2);
    grad::cross_entropy(z2, Y, loss, dz2, 1.0f / N);
    if (step > P::kSteps) break;  // the last forward only measures
    grad::matmul(h, w2.w, dz2, &dh, &w2.g), grad::bias(dz2, b2.g);
    grad::tanh(h, dh, dz1);
    grad::matmul(X, w1.w, dz1, nullptr, &w1.g), grad::bias(dz1, b1.g);
    for (DeviceParam* p : {&w1, &b1, &w2, &b2}) grad::adamw_step(p->w, p->g, p->m, p->v, step, prob.opt);
  }
  const std::vector<float> per_row = loss.download(), logits = z2.download();
  float mean = 0;
  std::size_t right = 0;
  for (std::size_t i = 0; i < N; ++i) mean += per_row[i] / N, right += (logits[i * C + 1] > logits[i * C]) == (prob.Y[i] == 1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("train %s: mean loss %.4f after %zu steps, %zu/%zu right (%.2f s)\n", d.str().c_str(), mean, P::kSteps, right, N, s);
  EXPECT_LE(mean, P::kMaxLoss) << d.str();
  EXPECT_EQ(right, N) << d.str();
}

}  // namespace trueno::test
