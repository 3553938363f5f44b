// The sampling kernels (kernels/sample_ops.cu) against the CPU sampler's rules, restated here (trueno does
// not link realizar; realizar/src/sampler/sampler.cpp): greedy is std::min_element and top-k is
// std::partial_sort under the ranking (larger logit, then lower id), the penalty is Sampler::penalize.
// Every result must equal the CPU's exactly (gpu_vs_cpu_exact in contracts/gpu/cuda.yaml), on vectors
// with ties, +-0, infinities and NaN, at lengths around the block and tile sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_test_support.h"
#include "support/temperature_draw_reference.h"
#include "trueno/cuda/ops/sample.h"
#include "trueno/ops.h"

namespace trueno::cuda {
namespace {

using namespace testing;

using Candidate = std::pair<float, std::int32_t>;
constexpr float kInf = std::numeric_limits<float>::infinity(), kNaN = std::numeric_limits<float>::quiet_NaN();

bool better(const Candidate& a, const Candidate& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); }

std::vector<Candidate> candidates(const std::vector<float>& x) {
  std::vector<Candidate> c(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) c[i] = {x[i], static_cast<std::int32_t>(i)};
  return c;
}

std::int32_t cpu_greedy(const std::vector<float>& x) {
  const auto c = candidates(x);
  return std::min_element(c.begin(), c.end(), better)->second;
}

std::vector<Candidate> cpu_top_k(const std::vector<float>& x, int k) {
  auto c = candidates(x);
  std::partial_sort(c.begin(), c.begin() + k, c.end(), better);
  c.resize(k);
  return c;
}

// Logits on a grid of 17 values, so that many tie, with -0, +0 and -inf among them.
std::vector<float> tied_logits(std::size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> level(-8, 8);
  std::vector<float> x(n);
  for (float& v : x) {
    const int l = level(rng);
    v = l == -8 ? -kInf : l == 0 ? ((rng() & 1) ? -0.0f : 0.0f) : static_cast<float>(l) * 0.25f;
  }
  return x;
}

// The test vectors of length n: normal, tied, a plateau of equal maxima (the lowest id must win, also in
// the last block), all -inf.
std::vector<std::pair<std::string, std::vector<float>>> cases(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, std::vector<float>>> out;
  out.emplace_back("normal", random_vector(n, rng, 3.0f));
  out.emplace_back("tied", tied_logits(n, rng));
  auto plateau = random_vector(n, rng);
  for (std::size_t i = n / 3; i < n; i += 97) plateau[i] = 9.0f;
  plateau[n - 1] = 9.0f;
  out.emplace_back("plateau", plateau);
  out.emplace_back("all -inf", std::vector<float>(n, -kInf));
  return out;
}

constexpr std::size_t kLengths[] = {1, 2, 31, 255, 256, 257, 1023, 1025, 2047, 2048, 2049, 5000, 32000, 32001, 151936, 262151};

ArgmaxResult gpu_argmax(const std::vector<float>& x, SampleScratch& s) {
  const DeviceBuffer dx = to_device(x);
  DeviceBuffer out(test_context(), sizeof(ArgmaxResult));
  argmax(test_context(), dx.ptr(), x.size(), s, out.ptr());
  test_context().synchronize();
  ArgmaxResult r{};
  out.download(&r, sizeof r);
  return r;
}

std::vector<char> gpu_top_k(const std::vector<float>& x, int k, SampleScratch& s) {
  const DeviceBuffer dx = to_device(x);
  DeviceBuffer out(test_context(), top_k_bytes(k));
  top_k(test_context(), dx.ptr(), x.size(), k, s, out.ptr());
  test_context().synchronize();
  std::vector<char> r(top_k_bytes(k));
  out.download(r.data(), r.size());
  return r;
}

TEST(CudaGpu, ArgmaxIsTheCpuGreedyPick) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 40);
  SampleScratch s(test_context(), 262151);
  std::vector<float> gpu, cpu;  // the picked ids (exact in f32) and the non-finite flags, case after case
  const auto check = [&](const std::vector<float>& x, const std::string& what) {
    const ArgmaxResult r = gpu_argmax(x, s);
    const bool finite = std::all_of(x.begin(), x.end(), [](float v) { return std::isfinite(v); });
    EXPECT_EQ(r.index, cpu_greedy(x)) << what;
    EXPECT_EQ(r.non_finite, finite ? 0 : 1) << what;
    gpu.push_back(static_cast<float>(r.index)), gpu.push_back(static_cast<float>(r.non_finite));
    cpu.push_back(static_cast<float>(cpu_greedy(x))), cpu.push_back(finite ? 0.0f : 1.0f);
  };
  for (std::size_t n : kLengths)
    for (const auto& [name, x] : cases(n, rng)) check(x, name + ", n = " + std::to_string(n));
  // Note [Greedy ties and NaN]: NaN never wins, except at id 0, which nothing replaces; +inf wins.
  auto x = random_vector(151936, rng);
  x[5] = kNaN, x[70000] = kNaN, x[151935] = kNaN;
  check(x, "NaN after id 0");
  x[0] = kNaN;
  check(x, "NaN at id 0");
  x[0] = 1.0f, x[100000] = kInf, x[140000] = kInf;
  check(x, "+inf twice");
  check({-0.0f, 0.0f}, "-0 then +0");
  check({0.0f, -0.0f}, "+0 then -0");
  check({kNaN, kNaN, kNaN}, "all NaN");
  expect_contract("argmax_final", gpu, cpu, "ids and non-finite flags");
  gpu_contract("argmax_partial");
}

TEST(CudaGpu, TopKIsTheCpuPartialSort) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 41);
  SampleScratch s(test_context(), 262151);
  std::vector<float> gpu, cpu;  // logit and id of each kept candidate, in order
  for (std::size_t n : kLengths)
    for (const auto& [name, x] : cases(n, rng))
      for (int k : {1, 2, 40, 100, 1000, kMaxTopK}) {
        if (static_cast<std::size_t>(k) > n) continue;
        const std::vector<char> r = gpu_top_k(x, k, s);
        TopKHeader head;
        std::memcpy(&head, r.data(), sizeof head);
        EXPECT_EQ(head.any_nan, 0);
        ASSERT_EQ(head.count, k) << name << ", n = " << n;
        const auto want = cpu_top_k(x, k);
        std::size_t differ = 0;
        for (int i = 0; i < k; ++i) {
          TopKCandidate c;
          std::memcpy(&c, r.data() + sizeof head + i * sizeof c, sizeof c);
          differ += std::memcmp(&c.logit, &want[i].first, 4) != 0 || c.id != want[i].second;
          gpu.push_back(c.logit), gpu.push_back(static_cast<float>(c.id));
          cpu.push_back(want[i].first), cpu.push_back(static_cast<float>(want[i].second));
        }
        EXPECT_EQ(differ, 0u) << name << ", n = " << n << ", k = " << k;
      }
  expect_contract("top_k_tiles", gpu, cpu, "the candidates in order");
  // A NaN logit is reported (the CPU's order is then its sort's own; the caller uses the logits).
  auto x = random_vector(151936, rng);
  x[77777] = kNaN;
  TopKHeader head;
  std::memcpy(&head, gpu_top_k(x, 40, s).data(), sizeof head);
  EXPECT_EQ(head.any_nan, 1);
}

TEST(CudaGpu, RepeatPenaltyIsTheCpuPenalty) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 42);
  std::vector<float> gpu, cpu;
  for (const float penalty : {1.1f, 1.3f, 0.9f})
    for (std::size_t n : {7u, 32000u, 151936u}) {
      auto x = tied_logits(n, rng);
      const auto normal = random_vector(n, rng, 4.0f);
      for (std::size_t i = 0; i < n; i += 2) x[i] = normal[i];
      std::vector<std::int32_t> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(i);
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(std::min<std::size_t>(n, 300));  // distinct, as Sampler::penalized gives them
      DeviceBuffer dx = to_device(x);
      const DeviceBuffer dids = to_device(ids);
      repeat_penalty(test_context(), dx.ptr(), dids.ptr(), ids.size(), penalty);
      const auto got = from_device(dx, n);
      auto want = x;
      for (const std::int32_t id : ids) want[id] = want[id] > 0 ? want[id] / penalty : want[id] * penalty;
      gpu.insert(gpu.end(), got.begin(), got.end());
      cpu.insert(cpu.end(), want.begin(), want.end());
    }
  expect_contract("repeat_penalty", gpu, cpu, "penalized logits (and the others unchanged)");
}

TEST(CudaGpu, TemperatureDrawIsTheCpuDraw) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 60);
  SampleScratch s(test_context(), 151936);
  std::vector<float> gpu, cpu;  // picked ids (exact in f32), then the weights' bits compared separately
  std::uniform_real_distribution<double> any(0.0, 1.0);
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{257}, std::size_t{32000}, std::size_t{151936}}) {
    auto x = random_vector(n, rng, 4.0f);
    if (n > 300) x[n / 3] = -kInf, x[n / 2] = 40.0f;  // an impossible token, and one far ahead (weights underflow)
    const DeviceBuffer xd = to_device(x), out(test_context(), sizeof(int));
    for (const float inv_t : {1.0f, 1.0f / 0.7f, 0.4f}) {
      const auto w = trueno::test::draw_weights(x, inv_t);
      for (int k = 0; k < 24; ++k) {
        const double u = k == 0 ? 0.0 : k == 1 ? std::nextafter(1.0, 0.0) : any(rng);
        temperature_draw(test_context(), xd.ptr(), n, inv_t, u, s, out.ptr());
        test_context().synchronize();
        int id = -2;
        out.download(&id, sizeof id);
        EXPECT_EQ(id, trueno::test::draw(w, u)) << "n " << n << ", 1/T " << inv_t << ", u " << u;
        gpu.push_back(static_cast<float>(id)), cpu.push_back(static_cast<float>(trueno::test::draw(w, u)));
      }
      std::vector<float> wd(n);
      s.weights.download(wd.data(), n * sizeof(float));
      EXPECT_EQ(std::memcmp(wd.data(), w.data(), n * sizeof(float)), 0) << "n " << n << ", 1/T " << inv_t << ": weights differ from trueno's exp";
    }
  }
  std::vector<float> x = {1.0f, kNaN, 2.0f};
  const DeviceBuffer xd = to_device(x), out(test_context(), sizeof(int));
  temperature_draw(test_context(), xd.ptr(), x.size(), 1.0f, 0.5, s, out.ptr());
  test_context().synchronize();
  int id = 0;
  out.download(&id, sizeof id);
  EXPECT_EQ(id, -1) << "a NaN logit is reported, not drawn over";
  expect_contract("temperature_draw", gpu, cpu, "drawn ids");
}

}  // namespace
}  // namespace trueno::cuda
