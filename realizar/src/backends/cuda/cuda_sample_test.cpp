// The CUDA sequence's token pick on the device (Note [Sampling on the device], sample_cuda.cpp) against the
// CPU sampler on the logits the same sequence copies back (label gpu: visible skips without a device):
// greedy, greedy with a repetition penalty, and seeded top-k/top-p/min-p draws give the same tokens, after
// a batched prompt and a token-by-token one, and the penalty leaves the logits logits() returns alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <cstdio>
#include <cstring>
#include <vector>

#include "realizar/recorder.h"
#include "realizar/sampler.h"
#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/sample.h"
#include "trueno/ops.h"
#include "support/logits_compare.h"
#include "support/testdata.h"

namespace realizar {
namespace {

constexpr const char* kModels[] = {"stories260K.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"};

std::vector<std::int32_t> prompt_of(const Model& m) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < 9; ++i) ids.push_back(static_cast<std::int32_t>((i * 41 + 3) % m.config().n_vocab));
  return ids;
}

SamplerOptions greedy_options(float repeat_penalty) {
  SamplerOptions o;
  o.temperature = 0, o.repeat_penalty = repeat_penalty, o.repeat_last_n = 8;
  return o;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

TEST(CudaGpuSample, GreedyPicksEqualTheCpuSamplersOnTheSameLogits) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : kModels) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    for (const auto prefill : {CudaOptions::Prefill::F16, CudaOptions::Prefill::TokenByToken}) {
      CudaOptions options;
      options.prefill = prefill;
      // a picks first and reads its logits after; b reads its logits before any pick (the reference).
      const auto a = test::make_cuda_sequence(model, 40, options), b = test::make_cuda_sequence(model, 40, options);
      std::vector<std::int32_t> history = prompt_of(model);
      a->forward(history), b->forward(history);
      Sampler plain(greedy_options(1.0f)), penalized(greedy_options(1.3f));
      for (int step = 0; step < 12; ++step) {
        const std::span<const float> want = b->logits();
        const std::int32_t with_penalty = a->sample(penalized, history), argmax = a->sample(plain, history);
        ASSERT_TRUE(same_bits(a->logits(), want)) << name << ", step " << step << ": the penalty reached logits()";
        EXPECT_EQ(argmax, Sampler(greedy_options(1.0f)).sample(want, history)) << name << ", step " << step;
        EXPECT_EQ(with_penalty, Sampler(greedy_options(1.3f)).sample(want, history)) << name << ", step " << step;
        EXPECT_EQ(a->logits_finite(), all_finite(want));
        const std::int32_t next = step % 2 == 0 ? argmax : with_penalty;  // both paths move the history
        history.push_back(next);
        a->forward(std::span(&history.back(), 1)), b->forward(std::span(&history.back(), 1));
      }
    }
  }
}

// A seeded run through the device (top-k there, the draw on the host) against the same sampler options and
// seed on the host over the logits copied back: the same tokens step after step, for top_k 40 and for
// top_k 0 (the whole vocabulary: these models have at most 1,000 tokens, under kMaxTopK).
TEST(CudaGpuSample, SeededDrawsEqualTheCpuSamplersOnTheSameLogits) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : kModels) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    for (const int top_k : {40, 0}) {
      SamplerOptions o;
      o.top_k = top_k, o.temperature = 0.8f, o.top_p = 0.9f, o.repeat_penalty = 1.1f, o.seed = 1234;
      Sampler device(o), host(o);
      const auto s = test::make_cuda_sequence(model, 48);
      std::vector<std::int32_t> history = prompt_of(model);
      s->forward(history);
      std::size_t distinct = 0;
      for (int step = 0; step < 32; ++step) {
        const std::int32_t got = s->sample(device, history);
        const std::int32_t want = host.sample(s->logits(), history);
        ASSERT_EQ(got, want) << name << ", top_k " << top_k << ", step " << step;
        distinct += std::find(history.begin(), history.end(), got) == history.end();
        history.push_back(got);
        s->forward(std::span(&history.back(), 1));
      }
      std::printf("%s, top_k %d: 32 tokens drawn on the device equal the host's (%zu new to the history)\n", name, top_k, distinct);
    }
  }
}

// Host logits (a forward with all_logits; CudaBatch's GEMM step) take the host path: still the CPU's pick.
TEST(CudaGpuSample, HostLogitsArePickedOnTheHost) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  const auto file = gguf::File::open(test::testdata_dir() + "/models/tiny-llama-q4_k_m.gguf");
  const Model model(file, Config::from_gguf(file));
  const auto weights = upload_weights(model, trueno::Device{trueno::DeviceKind::CUDA, 0});
  std::vector<std::unique_ptr<Sequence>> seqs;
  std::vector<Sequence*> ptrs;
  std::vector<std::int32_t> toks;
  const auto prompt = prompt_of(model);
  Sampler greedy(greedy_options(1.2f));
  for (std::size_t i = 0; i < 12; ++i) {  // kMinGemmBatch: the step goes through the GEMMs
    seqs.push_back(weights->new_sequence(32));
    seqs.back()->forward(std::span(prompt).first(1 + i % 5));
    seqs.back()->forward(std::span(prompt).subspan(6, 1), /*all_logits=*/true);  // one row, on the host
    EXPECT_EQ(seqs.back()->sample(greedy, prompt), Sampler(greedy_options(1.2f)).sample(seqs.back()->logits(), prompt));
    ptrs.push_back(seqs.back().get()), toks.push_back(static_cast<std::int32_t>(i * 7 + 1));
  }
  weights->new_batch()->step(ptrs, toks);
  for (Sequence* s : ptrs) {
    EXPECT_EQ(s->sample(greedy, prompt), Sampler(greedy_options(1.2f)).sample(s->logits(), prompt));
    EXPECT_EQ(s->logits_finite(), all_finite(s->logits()));
  }
}

// Note [Temperature alone]: with a temperature and no filter the whole draw runs on the device
// (cu::temperature_draw) and must give the host sampler's token, step after step, with and without the
// repetition penalty.
TEST(CudaGpuSample, TemperatureAloneDrawsEqualTheCpuSamplers) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  for (const char* name : kModels) {
    const auto file = gguf::File::open(test::testdata_dir() + "/models/" + name);
    const Model model(file, Config::from_gguf(file));
    for (const float penalty : {1.0f, 1.1f}) {
      SamplerOptions o;
      o.top_k = 0, o.top_p = 1.0f, o.min_p = 0.0f, o.temperature = 1.3f, o.repeat_penalty = penalty, o.seed = 99;
      Sampler device(o), host(o);
      ASSERT_TRUE(device.temperature_alone(model.config().n_vocab));
      const auto s = test::make_cuda_sequence(model, 48);
      std::vector<std::int32_t> history = prompt_of(model);
      s->forward(history);
      for (int step = 0; step < 32; ++step) {
        const std::int32_t got = s->sample(device, history);
        const std::int32_t want = host.sample(s->logits(), history);
        ASSERT_EQ(got, want) << name << ", penalty " << penalty << ", step " << step;
        history.push_back(got);
        s->forward(std::span(&history.back(), 1));
      }
    }
  }
}

// The kernel alone over large vocabularies: its weights are the host's bits (trueno's exp, step for
// step) and its pick is Sampler::pick_in_id_order's for many u, including u near 0 and near 1.
TEST(CudaGpuSample, TemperatureDrawKernelFollowsTheHostBitForBit) {
  std::string why;
  if (!test::cuda_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  namespace cu = trueno::cuda;
  const auto ctx = cu::Context::open(0);
  const std::uint64_t seed = 4242;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (const std::size_t V : {std::size_t{1000}, std::size_t{32000}, std::size_t{152064}}) {
    std::normal_distribution<float> logit(0.0f, 4.0f);
    std::vector<float> x(V);
    for (auto& v : x) v = logit(rng);
    x[V / 3] = -std::numeric_limits<float>::infinity();
    x[V / 2] = 40.0f;  // a clear favourite: weights far below it underflow to 0
    cu::DeviceBuffer xd(*ctx, V * 4), out(*ctx, 4);
    xd.upload(x.data(), V * 4);
    cu::SampleScratch scratch(*ctx, V);
    for (const float temperature : {0.7f, 1.0f, 2.5f}) {
      SamplerOptions o;
      o.top_k = 0, o.top_p = 1, o.min_p = 0, o.temperature = temperature;
      Sampler host(o);
      const float inv_t = host.inverse_temperature();
      float top = -INFINITY;
      for (float v : x) top = std::max(top, v);
      std::vector<float> w(V);
      for (std::size_t i = 0; i < V; ++i) w[i] = (x[i] - top) * inv_t;
      trueno::ops::exp(w, w);
      std::uniform_real_distribution<double> any(0.0, 1.0);
      for (int k = 0; k < 40; ++k) {
        const double u = k == 0 ? 0.0 : k == 1 ? std::nextafter(1.0, 0.0) : any(rng);
        cu::temperature_draw(*ctx, xd.ptr(), V, inv_t, u, scratch, out.ptr());
        ctx->synchronize();
        std::int32_t got;
        out.download(&got, 4);
        ASSERT_EQ(got, host.pick_in_id_order(w, u)) << "V " << V << ", T " << temperature << ", u " << u;
      }
      std::vector<float> wd(V);
      scratch.weights.download(wd.data(), V * 4);
      ASSERT_EQ(std::memcmp(wd.data(), w.data(), V * 4), 0) << "V " << V << ", T " << temperature << ": the device's weights differ";
    }
  }
}

}  // namespace
}  // namespace realizar
