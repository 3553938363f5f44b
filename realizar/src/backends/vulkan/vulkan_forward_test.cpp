// The Vulkan sequence's paths against each other (label gpu; on lavapipe in CI, visible skips without a
// Vulkan device): a prompt in chunks of rows against every token alone, matrices split by rows (Note
// [Split matrices]) against whole ones, and the batch step against each sequence alone.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "realizar/model.h"
#include "support/logits_compare.h"
#include "support/testdata.h"

namespace realizar {
namespace {

struct Loaded {
  explicit Loaded(const char* name)
      : file(gguf::File::open(test::testdata_dir() + "/models/" + name)), model(file, Config::from_gguf(file)) {
    for (std::size_t i = 0; i < 29; ++i) ids.push_back(static_cast<std::int32_t>((i * 37 + 1) % model.config().n_vocab));
  }
  gguf::File file;
  Model model;
  std::vector<std::int32_t> ids;
};

// Teacher-forced logits: the whole prompt in one forward call, or one token per call.
std::vector<float> logits_of(const Model& m, const std::vector<std::int32_t>& ids, bool one_call) {
  const auto s = test::make_vulkan_sequence(m, ids.size());
  if (one_call) {
    s->forward(ids, true);
    return {s->logits().begin(), s->logits().end()};
  }
  std::vector<float> all;
  for (const auto id : ids) {
    s->forward(std::span(&id, 1), true);
    all.insert(all.end(), s->logits().begin(), s->logits().end());
  }
  return all;
}

// A prompt's chunk goes through the tiled GEMM (29 tokens; Note [Vulkan prefill GEMM]) or, where a
// matrix's width is not a multiple of 32 (stories260K's FFN of 172), through GEMVs of up to 8 rows whose
// sums run in the same order as alone (measured: equal). The GEMM sums in another order: measured max
// |d| 2.7e-4 on logits of magnitude ~10 (tiny2-qwen2), 2.9e-5 (tiny-llama).
TEST(VulkanGpuForward, PromptChunksAgreeWithTokenByToken) {
  std::string why;
  if (!test::vulkan_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no Vulkan device: " << why;
  for (const char* name : {"stories260K-f16.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const Loaded l(name);
    const std::size_t V = l.model.config().n_vocab;
    const auto chunked = logits_of(l.model, l.ids, true), alone = logits_of(l.model, l.ids, false);
    const test::RowStats st = test::compare_rows(chunked.data(), alone.data(), l.ids.size(), V);
    std::printf("%s: 29 tokens in chunks vs alone: min cosine %.9f, max |d| %.2e, argmax %zu/29\n", name, st.min_cos, st.max_abs, st.agree);
    EXPECT_GE(st.min_cos, 0.99999) << name;
    EXPECT_LE(st.max_abs, 2e-3) << name;
    EXPECT_EQ(st.agree, l.ids.size()) << name;
  }
}

// TRUENO_VULKAN_MAX_BUFFER lowers the storage-buffer limit below these models' larger matrices (and above
// their activations), so that those are split into slices of rows, the accumulating down product too: the
// logits equal the unsplit ones (a row's arithmetic does not change).
TEST(VulkanGpuForward, MatricesSplitByRowsGiveTheSameLogits) {
  std::string why;
  if (!test::vulkan_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no Vulkan device: " << why;
  // stories260K: output 128 KiB, gate/up/down 44 KiB, activations <= 16 KiB; tiny-llama: gate/up 108 KiB,
  // down 158 KiB, output 105 KiB, activations (29 rows) <= 87 KiB.
  for (const auto& [name, limit] : {std::pair{"stories260K.gguf", "16384"}, std::pair{"tiny-llama-q4_k_m.gguf", "98304"}}) {
    const Loaded l(name);
    const std::size_t V = l.model.config().n_vocab;
    const auto whole = logits_of(l.model, l.ids, true);
    ::setenv("TRUENO_VULKAN_MAX_BUFFER", limit, 1);
    std::vector<float> split;
    try {
      split = logits_of(l.model, l.ids, true);
    } catch (...) {
      ::unsetenv("TRUENO_VULKAN_MAX_BUFFER");
      throw;
    }
    ::unsetenv("TRUENO_VULKAN_MAX_BUFFER");
    const test::RowStats st = test::compare_rows(split.data(), whole.data(), l.ids.size(), V);
    std::printf("%s: split into slices of %s bytes vs whole: max |d| %.2e, argmax %zu/29\n", name, limit, st.max_abs, st.agree);
    EXPECT_LE(st.max_abs, 1e-6) << name;
    EXPECT_EQ(st.agree, l.ids.size()) << name;
  }
}

// The batch step over three sequences at different positions equals each sequence stepped alone; bad
// batches are refused before anything advances.
TEST(VulkanGpuForward, BatchStepEqualsEachSequenceAlone) {
  std::string why;
  if (!test::vulkan_or_skip_reason(&why)) GTEST_SKIP() << "skipped: no Vulkan device: " << why;
  const Loaded l("tiny-llama-q8_0.gguf");
  const auto weights = upload_weights(l.model, test::vulkan_test_device());
  std::vector<std::unique_ptr<Sequence>> a, b;
  for (std::size_t i = 0; i < 3; ++i) {
    a.push_back(weights->new_sequence(16)), b.push_back(weights->new_sequence(16));
    const auto prompt = std::span(l.ids).first(2 + 3 * i);
    a[i]->forward(prompt), b[i]->forward(prompt);
  }
  const std::vector<std::int32_t> next = {5, 9, 12};
  std::vector<Sequence*> seqs = {a[0].get(), a[1].get(), a[2].get()};
  weights->new_batch()->step(seqs, next);
  for (std::size_t i = 0; i < 3; ++i) {
    b[i]->forward(std::span(&next[i], 1));
    ASSERT_EQ(a[i]->pos(), b[i]->pos());
    const auto x = a[i]->logits(), y = b[i]->logits();
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k) ASSERT_EQ(x[k], y[k]) << "sequence " << i << " logit " << k;
  }
  std::vector<Sequence*> twice = {a[0].get(), a[0].get()};
  const std::vector<std::int32_t> two = {1, 2};
  EXPECT_THROW(weights->new_batch()->step(twice, two), trueno::InvalidArgument);
  EXPECT_EQ(a[0]->pos(), b[0]->pos()) << "a refused batch advances nothing";
}

}  // namespace
}  // namespace realizar
