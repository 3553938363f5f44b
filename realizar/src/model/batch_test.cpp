// The paged KV pool and the batched CPU step (Note [Paged KV cache], Note [Batched step]): a sequence's
// logits are the same, bit for bit, alone or in any batch, as sequences of different lengths join and leave.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "realizar/kv_cache.h"
#include "realizar/model.h"
#include "trueno/error.h"
#include "support/testdata.h"

namespace realizar {
namespace {

struct Loaded {
  explicit Loaded(const std::string& name)
      : file(gguf::File::open(test::testdata_dir() + "/models/" + name)), model(file, Config::from_gguf(file)) {}
  gguf::File file;
  Model model;
};

std::vector<std::int32_t> random_tokens(std::mt19937_64& rng, std::size_t n, std::uint32_t vocab) {
  std::uniform_int_distribution<std::int32_t> d(3, static_cast<std::int32_t>(vocab) - 1);
  std::vector<std::int32_t> v(n);
  for (auto& t : v) t = d(rng);
  return v;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class BatchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BatchTest, RowsEqualSingleSequencesAsSequencesJoinAndLeave) {
  const Loaded l(GetParam());
  const Model& m = l.model;
  const std::uint64_t seed = test::seed();
  std::printf("seed %llu (TRUENO_TEST_SEED)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  constexpr std::size_t kSeqs = 5, kCtx = 48;
  // Prompts of different lengths; each sequence then generates from its own token stream.
  std::vector<std::vector<std::int32_t>> prompt(kSeqs), stream(kSeqs);
  for (std::size_t i = 0; i < kSeqs; ++i) {
    prompt[i] = random_tokens(rng, 1 + 3 * i, m.config().n_vocab);
    stream[i] = random_tokens(rng, kCtx, m.config().n_vocab);
  }
  auto pool = std::make_shared<KvPool>(m.config(), 8, 64);  // small blocks: every sequence spans several
  std::vector<std::unique_ptr<Session>> batched, alone;
  for (std::size_t i = 0; i < kSeqs; ++i) {
    batched.push_back(std::make_unique<Session>(m, kCtx, pool));
    alone.push_back(std::make_unique<Session>(m, kCtx));
  }
  CpuBatch batch(m);
  std::vector<std::size_t> done(kSeqs, 0);
  // Step s: sequence i is in the batch from step i (it joins after prefilling) to step 12 + i (it leaves).
  for (std::size_t s = 0; s < 16; ++s) {
    std::vector<Sequence*> in;
    std::vector<std::int32_t> toks;
    for (std::size_t i = 0; i < kSeqs; ++i) {
      if (s == i) {
        batched[i]->forward(prompt[i]);
        alone[i]->forward(prompt[i]);
        ASSERT_TRUE(same_bits(batched[i]->logits(), alone[i]->logits())) << "prompt of sequence " << i;
      }
      if (s >= i && s < 12 + i) in.push_back(batched[i].get()), toks.push_back(stream[i][done[i]]);
    }
    if (in.empty()) continue;
    batch.step(in, toks);
    for (std::size_t k = 0; k < in.size(); ++k) {
      const std::size_t i = static_cast<std::size_t>(std::find_if(batched.begin(), batched.end(), [&](auto& p) { return p.get() == in[k]; }) - batched.begin());
      alone[i]->forward(std::span(&toks[k], 1));
      EXPECT_EQ(batched[i]->pos(), alone[i]->pos());
      ASSERT_TRUE(same_bits(batched[i]->logits(), alone[i]->logits()))
          << "sequence " << i << " at position " << alone[i]->pos() - 1 << " in a batch of " << in.size();
      ++done[i];
    }
  }
  // Sequences leave: their blocks go back to the pool.
  const std::size_t before = pool->free_blocks();
  batched[0].reset();
  EXPECT_GT(pool->free_blocks(), before);
  batched.clear();
  EXPECT_EQ(pool->free_blocks(), pool->total_blocks());
}

// Note [Packed CPU weights]: decode with the packed Q4_K and Q6_K matrices gives the logits of decode without them,
// bit for bit (REALIZAR_REPACK=0 is read when a model first packs).
TEST_P(BatchTest, PackedDecodeEqualsUnpackedDecode) {
  const Loaded packed(GetParam()), plain(GetParam());
  setenv("REALIZAR_REPACK", "0", 1);
  const bool plain_packs = plain.model.cpu_packed() != nullptr;
  unsetenv("REALIZAR_REPACK");
  ASSERT_FALSE(plain_packs);
  std::printf("%s: %s\n", GetParam(), packed.model.cpu_packed() ? "Q4_K/Q6_K matrices packed" : "nothing packed (no Q4_K or Q6_K matrix, or no 8-row kernel on this tier)");
  std::mt19937_64 rng(test::seed());
  const auto tokens = random_tokens(rng, 12, packed.model.config().n_vocab);
  Session a(packed.model, 16), b(plain.model, 16);
  a.forward(std::span(tokens).first(3)), b.forward(std::span(tokens).first(3));
  for (std::size_t t = 3; t < tokens.size(); ++t) {
    a.forward(std::span(tokens).subspan(t, 1)), b.forward(std::span(tokens).subspan(t, 1));
    ASSERT_TRUE(same_bits(a.logits(), b.logits())) << "position " << t;
  }
}

// Batch::prefill's default (the CPU): each chunk as its sequence's own forward, bit for bit; a bad call
// (a sequence twice, an empty chunk, a chunk past the context) throws before any sequence advances.
TEST_P(BatchTest, PrefillOfSeveralChunksEqualsEachForward) {
  const Loaded l(GetParam());
  std::mt19937_64 rng(test::seed());
  const auto V = l.model.config().n_vocab;
  CpuBatch batch(l.model);
  Session a0(l.model, 32), a1(l.model, 32), b0(l.model, 32), b1(l.model, 32);
  const auto p0 = random_tokens(rng, 7, V), p1 = random_tokens(rng, 3, V), tail = random_tokens(rng, 4, V);
  a1.forward(tail), b1.forward(tail);
  std::vector<Sequence*> seqs{&a0, &a1};
  std::vector<std::span<const std::int32_t>> chunks{p0, p1};
  std::vector<Sequence*> twice{&a0, &a0};
  EXPECT_THROW(batch.prefill(twice, chunks), trueno::InvalidArgument);
  std::vector<std::span<const std::int32_t>> empty{p0, {}};
  EXPECT_THROW(batch.prefill(seqs, empty), trueno::InvalidArgument);
  const auto long_one = random_tokens(rng, 30, V);
  std::vector<std::span<const std::int32_t>> too_long{p0, long_one};
  EXPECT_THROW(batch.prefill(seqs, too_long), trueno::InvalidArgument);
  ASSERT_EQ(a0.pos(), 0u);
  ASSERT_EQ(a1.pos(), tail.size());
  batch.prefill(seqs, chunks);
  b0.forward(p0), b1.forward(p1);
  EXPECT_EQ(a0.pos(), b0.pos());
  EXPECT_EQ(a1.pos(), b1.pos());
  EXPECT_TRUE(same_bits(a0.logits(), b0.logits()));
  EXPECT_TRUE(same_bits(a1.logits(), b1.logits()));
}

INSTANTIATE_TEST_SUITE_P(Models, BatchTest, ::testing::Values("stories260K.gguf", "tiny-llama-q4_k_m.gguf", "tiny2-qwen2-q4_k_m.gguf"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(KvPool, RunningOutIsAClearErrorAndNothingAdvances) {
  const Loaded l("stories260K.gguf");
  auto pool = std::make_shared<KvPool>(l.model.config(), 4, 3);  // 12 positions in all
  Session a(l.model, 64, pool), b(l.model, 64, pool);
  a.forward(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7, 8});  // 2 blocks
  EXPECT_EQ(pool->free_blocks(), 1u);
  b.forward(std::vector<std::int32_t>{1, 2, 3});  // the last block
  try {
    b.forward(std::vector<std::int32_t>{4, 5});
    FAIL() << "no error";
  } catch (const OutOfKvBlocks& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("free of 3"), std::string::npos) << msg;
  }
  EXPECT_EQ(b.pos(), 3u);  // nothing advanced
  CpuBatch batch(l.model);
  std::vector<Sequence*> both{&a, &b};
  EXPECT_THROW(batch.step(both, std::vector<std::int32_t>{1, 2}), OutOfKvBlocks);  // a needs no block, b one
  a.reset();  // a's blocks go back
  EXPECT_EQ(pool->free_blocks(), 2u);
  EXPECT_EQ(b.pos(), 3u);
  b.forward(std::vector<std::int32_t>{4, 5});
  EXPECT_EQ(b.pos(), 5u);
  EXPECT_THROW(KvPool(l.model.config(), 0, 4), trueno::InvalidArgument);
  std::vector<Sequence*> twice{&b, &b};
  EXPECT_THROW(batch.step(twice, std::vector<std::int32_t>{1, 2}), trueno::InvalidArgument);
}

}  // namespace
}  // namespace realizar
