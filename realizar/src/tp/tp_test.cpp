// Tensor parallelism on the CPU (Note [Tensor-parallel forward], tp/shard.h): N-way loopback logits
// against the single-device CPU pass on the test models, for a prompt batch (every row's logits) and
// decode steps; the shapes that do not split are refused with the reason.
//
// The bound: the ranks compute the same partial products as one device (the row-parallel splits are on
// quantization-block boundaries, so the activations quantize identically), and only the two all-reduces
// per layer sum them in another order: a few f32 ulps per layer. Roundings downstream can amplify one
// such ulp into a whole step: the f16 KV cache and attention (Note [F16 attention]), activations rounded
// to f16 before F16 products, or quantized to 8 bits (1/127 of their block's largest value) before Q8_0
// and K-quant products. Measured (printed below): f32 4e-5 of the row's largest logit, f16 6e-4,
// Q8_0 x4 1.2e-3, Q4_K_M x2 1.5e-7; cosine >= 0.9999992 everywhere. So: cosine >= 0.99999 per row (the
// CPU contract for f32/f16 models against the reference is 0.9999), max |d| <= 5e-3 x the row's largest
// |logit| (4x the worst measured), and the same argmax on every row (a near tie could flip it; none does
// on these prompts).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "realizar/model.h"
#include "realizar/tensor_parallel.h"
#include "support/testdata.h"
#include "tp/shard.h"
#include "trueno/error.h"

namespace realizar {
namespace {

struct Loaded {
  explicit Loaded(const std::string& name)
      : file(gguf::File::open(test::testdata_dir() + "/models/" + name)), model(file, Config::from_gguf(file)) {}
  gguf::File file;
  Model model;
};

struct Agreement {
  double min_cos = 1, max_rel = 0, max_abs = 0;
  std::size_t rows = 0, argmax_same = 0;
  void add(std::span<const float> a, std::span<const float> b, std::size_t V) {
    for (std::size_t r = 0; r < a.size() / V; ++r) {
      double dot = 0, na = 0, nb = 0, d = 0, big = 0;
      std::size_t ia = 0, ib = 0;
      for (std::size_t i = 0; i < V; ++i) {
        const double x = a[r * V + i], y = b[r * V + i];
        dot += x * y, na += x * x, nb += y * y;
        d = std::max(d, std::abs(x - y)), big = std::max(big, std::abs(x));
        if (x > a[r * V + ia]) ia = i;
        if (y > b[r * V + ib]) ib = i;
      }
      min_cos = std::min(min_cos, dot / std::sqrt(na * nb));
      max_abs = std::max(max_abs, d), max_rel = std::max(max_rel, d / big);
      ++rows, argmax_same += ia == ib;
    }
  }
};

// A prompt of 12 tokens (all rows' logits), then 6 decode steps fed with the single device's argmax.
Agreement compare(const Model& m, int n_ranks, std::vector<float>* tp_logits = nullptr) {
  const std::size_t V = m.config().n_vocab;
  Session one(m, 32);
  auto tp = make_tp_sequence(shard_model(m, n_ranks), 32);
  std::vector<std::int32_t> prompt = {1, 15, 42, 7, 99, 3, 250, 18, 64, 5, 301, 11};
  for (auto& t : prompt) t %= static_cast<std::int32_t>(V);
  Agreement a;
  one.forward(prompt, true), tp->forward(prompt, true);
  a.add(tp->logits(), one.logits(), V);
  if (tp_logits) tp_logits->assign(tp->logits().begin(), tp->logits().end());
  for (int step = 0; step < 6; ++step) {
    const auto l = one.logits().last(V);
    const std::int32_t next = static_cast<std::int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    one.forward(std::span(&next, 1)), tp->forward(std::span(&next, 1));
    a.add(tp->logits(), one.logits(), V);
    if (tp_logits) tp_logits->insert(tp_logits->end(), tp->logits().begin(), tp->logits().end());
  }
  return a;
}

struct Case {
  const char* model;
  int n_ranks;
};

class TpLoopback : public ::testing::TestWithParam<Case> {};

TEST_P(TpLoopback, LogitsMatchOneDevice) {
  const Case c = GetParam();
  const Loaded l(c.model);
  ASSERT_EQ(tensor_parallel_refusal(l.model, c.n_ranks), "");
  const Agreement a = compare(l.model, c.n_ranks);
  std::printf("TP %s x%d: %zu rows, min cosine %.9f, max |d| %.2e (%.2e of the row's largest), argmax %zu/%zu\n", c.model,
              c.n_ranks, a.rows, a.min_cos, a.max_abs, a.max_rel, a.argmax_same, a.rows);
  EXPECT_GE(a.min_cos, 0.99999);
  EXPECT_LE(a.max_rel, 5e-3);
  EXPECT_EQ(a.argmax_same, a.rows);
}

INSTANTIATE_TEST_SUITE_P(Models, TpLoopback,
                         ::testing::Values(Case{"stories260K.gguf", 2}, Case{"stories260K.gguf", 4}, Case{"stories260K.gguf", 8}, Case{"stories260K-f16.gguf", 2},
                                           Case{"stories260K-f16.gguf", 4}, Case{"tiny-llama-f16.gguf", 2},
                                           Case{"tiny-llama-f16.gguf", 4}, Case{"tiny-llama-q8_0.gguf", 2},
                                           Case{"tiny-llama-q8_0.gguf", 4}, Case{"tiny2-qwen2-q4_k_m.gguf", 2}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.model).substr(0, std::string(info.param.model).find('.'));
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n + "_x" + std::to_string(info.param.n_ranks);
                         });

// Note [Loopback reduction order]: a rerun gives the same bits.
TEST(TpLoopbackDeterminism, RerunsAreBitIdentical) {
  const Loaded l("tiny2-qwen2-q4_k_m.gguf");
  std::vector<float> a, b;
  compare(l.model, 2, &a), compare(l.model, 2, &b);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

void expect_refused(const char* model, int n, const char* reason) {
  const Loaded l(model);
  const std::string why = tensor_parallel_refusal(l.model, n);
  EXPECT_NE(why.find(reason), std::string::npos) << model << " x" << n << ": " << why;
  try {
    shard_model(l.model, n);
    ADD_FAILURE() << model << " x" << n << " was split";
  } catch (const trueno::InvalidArgument& e) {
    EXPECT_EQ(why, e.what());
  }
}

TEST(TpRefusal, ShapesThatDoNotSplitSayWhy) {
  // Q4_K / Q6_K attention output: 256 columns, 128 per rank, half a 256-value block.
  expect_refused("tiny-llama-q4_k_m.gguf", 2,
                 "blk.0.attn_output.weight (q4_k) would split its 256 columns into 128 per rank, not a whole number of 256-value");
  expect_refused("tiny-llama-q6_k.gguf", 2, "(q6_k) would split its 256 columns into 128 per rank");
  expect_refused("tiny2-qwen2-q4_k_m.gguf", 4, "would split its 512 columns into 128 per rank");
  expect_refused("stories260K.gguf", 3, "8 attention heads do not divide among 3 ranks");
  expect_refused("stories260K.gguf", 16, "8 attention heads do not divide among 16 ranks");
  expect_refused("tiny-llama-q8_0.gguf", 8, "4 attention heads do not divide among 8 ranks");
  expect_refused("stories260K.gguf", 0, "at least 1 rank");
}

// Note [Uneven FFN split]: stories260K's FFN width 172 on 8 ranks is 4 x 22 + 4 x 21 units (f32: blocks of
// one value); the 8-way case above checks its logits.
TEST(TpRefusal, FfnWidthSplitsUnevenlyOnBlocks) {
  const Loaded l("stories260K.gguf");
  EXPECT_EQ(tensor_parallel_refusal(l.model, 8), "");
  Config c = l.model.config();
  const auto shards = shard_model(l.model, 8);
  std::uint32_t total = 0;
  for (int r = 0; r < 8; ++r) {
    const std::uint32_t ff = shards->rank(r).model->config().n_ff;
    EXPECT_EQ(ff, r < 4 ? 22u : 21u) << "rank " << r;
    total += ff;
  }
  EXPECT_EQ(total, c.n_ff);
}

TEST(TpRefusal, KvHeadsThatNeitherDivideNorReplicate) {
  // No test model has such a shape: a configuration without weights (only the counts are checked).
  const Loaded l("stories260K.gguf");
  Config c = l.model.config();
  c.n_head = 12, c.n_head_kv = 6;
  const Model m(l.file, c, Model::Unloaded{});
  EXPECT_NE(tensor_parallel_refusal(m, 4).find("6 KV heads neither divide among 4 ranks nor replicate evenly"), std::string::npos)
      << tensor_parallel_refusal(m, 4);
  EXPECT_EQ(tensor_parallel_refusal(m, 2), "");  // 3 KV heads per rank
  c.n_head = 8, c.n_head_kv = 4;                 // 8 ranks: each KV head on 2 ranks
  EXPECT_EQ(tensor_parallel_refusal(Model(l.file, c, Model::Unloaded{}), 8).find("KV heads"), std::string::npos);
}

TEST(TpRefusal, AVocabularyTooSmallForItsSlices) {
  const Loaded l("stories260K.gguf");
  Config c = l.model.config();
  c.n_vocab = 9;  // slices of ceil(9 / 4) = 3 rows: ranks 0-2 take all 9
  const std::string why = tensor_parallel_refusal(Model(l.file, c, Model::Unloaded{}), 4);
  EXPECT_NE(why.find("a vocabulary of 9 rows in slices of 3 leaves the last rank none"), std::string::npos) << why;
}

TEST(TpSequence, OneRankIsTheSingleDevicePassBitForBit) {
  const Loaded l("tiny-llama-q4_k_m.gguf");
  Session one(l.model, 16);
  auto tp = make_tp_sequence(shard_model(l.model, 1), 16);
  const std::vector<std::int32_t> prompt = {1, 5, 9, 200, 31};
  one.forward(prompt, true), tp->forward(prompt, true);
  ASSERT_EQ(one.logits().size(), tp->logits().size());
  EXPECT_EQ(0, std::memcmp(one.logits().data(), tp->logits().data(), one.logits().size() * sizeof(float)));
  EXPECT_NE(tp->backend_name().find("x1 (tensor parallel, loopback)"), std::string::npos) << tp->backend_name();
}

// Note [Batched step] for TP: three sequences of different lengths step together and alone, equal bits.
TEST(TpSequence, BatchedRowsEqualSequencesSteppingAlone) {
  const Loaded l("tiny2-qwen2-q4_k_m.gguf");
  const auto shards = shard_model(l.model, 2);
  const std::vector<std::vector<std::int32_t>> prompts = {{1, 5, 9}, {7}, {300, 2, 44, 81, 6}};
  std::vector<std::unique_ptr<Sequence>> together, alone;
  for (const auto& p : prompts) {
    together.push_back(make_tp_sequence(shards, 16)), alone.push_back(make_tp_sequence(shards, 16));
    together.back()->forward(p), alone.back()->forward(p);
  }
  auto batch = make_tp_batch(shards);
  std::vector<Sequence*> seqs;
  for (auto& s : together) seqs.push_back(s.get());
  std::vector<std::int32_t> next = {11, 12, 13};
  for (int step = 0; step < 3; ++step) {
    batch->step(seqs, next);
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      alone[i]->forward(std::span(&next[i], 1));
      ASSERT_EQ(0, std::memcmp(seqs[i]->logits().data(), alone[i]->logits().data(), seqs[i]->logits().size_bytes()))
          << "sequence " << i << ", step " << step;
      EXPECT_EQ(seqs[i]->pos(), alone[i]->pos());
      next[i] = (next[i] * 7 + 3) % 1000;
    }
  }
  Session cpu(l.model, 4);
  Sequence* foreign[] = {&cpu};
  const std::int32_t one[] = {1};
  EXPECT_THROW(batch->step(foreign, one), trueno::InvalidArgument);  // not a TP sequence of these shards
}

TEST(TpSequence, BadTokensThrowBeforeAnyRankRuns) {
  const Loaded l("stories260K.gguf");
  auto tp = make_tp_sequence(shard_model(l.model, 2), 8);
  const std::vector<std::int32_t> bad = {1, 100000};
  EXPECT_THROW(tp->forward(bad), trueno::InvalidArgument);
  const std::vector<std::int32_t> ok = {1, 2};
  tp->forward(ok);  // still usable
  EXPECT_EQ(tp->pos(), 2u);
}

}  // namespace
}  // namespace realizar
