// The CUDA sequence's token pick on the device (Note [Sampling on the device], sample_cuda.cpp) against the
// CPU sampler on the logits the same sequence copies back (label gpu: visible skips without a device):
// greedy, greedy with a repetition penalty, and seeded top-k/top-p/min-p draws give the same tokens, after
// a batched prompt and a token-by-token one, and the penalty leaves the logits logits() returns alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "realizar/recorder.h"
#include "realizar/sampler.h"
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

}  // namespace
}  // namespace realizar
