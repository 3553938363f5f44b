// Named intermediates (Note [Intermediates]) of the CPU pass, and the finite check that names where a
// NaN first appears (a NaN weight, a NaN rms_eps, a NaN in one token's embedding row).
#include "realizar/recorder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/gguf_damage.h"
#include "support/logits_compare.h"
#include "support/testdata.h"

namespace realizar {
namespace {

std::string stories() { return test::testdata_dir() + "/models/stories260K.gguf"; }
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Loaded {
  explicit Loaded(gguf::File f) : file(std::move(f)), model(file, Config::from_gguf(file)) {}
  Loaded(gguf::File f, Config c) : file(std::move(f)), model(file, c) {}
  gguf::File file;
  Model model;
};

std::vector<std::pair<int, std::string>> names(const Recording& r) {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& t : r.tensors()) out.emplace_back(t.layer, t.name);
  return out;
}

TEST(Recorder, CpuRecordsEveryNamedTensorOfTheLastTokenInOrder) {
  for (const char* name : {"stories260K.gguf", "tiny2-qwen2-q4_k_m.gguf"}) {
    const Loaded l(gguf::File::open(test::testdata_dir() + "/models/" + name));
    const Config& c = l.model.config();
    Session s(l.model, 8);
    Recording rec;
    s.set_recorder(&rec);
    const std::vector<std::int32_t> ids = {1, 40, 77};
    s.forward(ids, true);
    std::vector<std::pair<int, std::string>> want = {{kNoLayer, "token_embd"}};
    for (int layer = 0; layer < static_cast<int>(c.n_layer); ++layer)
      for (const auto t : kLayerTensors) want.emplace_back(layer, std::string(t));
    want.emplace_back(kNoLayer, "output_norm");
    want.emplace_back(kNoLayer, "logits");
    EXPECT_EQ(names(rec), want) << name;
    const std::size_t qd = std::size_t{c.n_head} * c.head_dim, kvd = std::size_t{c.n_head_kv} * c.head_dim;
    EXPECT_EQ(rec.find(0, "q_rope")->values.size(), qd);
    EXPECT_EQ(rec.find(0, "k")->values.size(), kvd);
    EXPECT_EQ(rec.find(1, "ffn_act")->values.size(), c.n_ff);
    EXPECT_EQ(rec.find(1, "l_out")->values.size(), c.n_embd);
    // The last token's row, not the first: the logits recorded are the last row of the call's logits.
    const auto& lg = rec.find(kNoLayer, "logits")->values;
    ASSERT_EQ(lg.size(), c.n_vocab);
    EXPECT_TRUE(std::equal(lg.begin(), lg.end(), s.logits().end() - c.n_vocab)) << name;
    // The blocks' sums add up: l_out = ffn_inp + ffn_out.
    const auto &inp = rec.find(1, "ffn_inp")->values, &out = rec.find(1, "ffn_out")->values, &sum = rec.find(1, "l_out")->values;
    for (std::size_t i = 0; i < sum.size(); ++i) EXPECT_FLOAT_EQ(sum[i], inp[i] + out[i]);
  }
}

// The last row of a batch is the same token fed alone after the others (to rounding: batched products),
// and recording changes no logit.
TEST(Recorder, LastRowOfABatchIsTheSameTokenFedAloneAndRecordingChangesNothing) {
  const Loaded l(gguf::File::open(stories()));
  const std::vector<std::int32_t> ids = {1, 403, 407, 261};
  Recording batch, alone;
  Session a(l.model, 8), b(l.model, 8), plain(l.model, 8);
  a.set_recorder(&batch);
  a.forward(ids);
  plain.forward(ids);
  EXPECT_TRUE(std::equal(a.logits().begin(), a.logits().end(), plain.logits().begin()));
  b.forward(std::span(ids).first(3));
  b.set_recorder(&alone);
  b.forward(std::span(ids).subspan(3));
  ASSERT_EQ(names(batch), names(alone));
  for (std::size_t i = 0; i < batch.tensors().size(); ++i) {
    const auto& x = batch.tensors()[i].values;
    const auto& y = alone.tensors()[i].values;
    ASSERT_EQ(x.size(), y.size());
    EXPECT_GE(test::compare_rows(x.data(), y.data(), 1, x.size()).min_cos, 0.9999)
        << tensor_label(batch.tensors()[i].layer, batch.tensors()[i].name);
  }
  b.set_recorder(nullptr);
  alone.clear();
  b.reset();
  b.forward(ids);
  EXPECT_TRUE(alone.tensors().empty()) << "no recorder, nothing recorded";
}

std::string error_of(Sequence& s, std::span<const std::int32_t> ids, bool all_logits) {
  try {
    s.forward(ids, all_logits);
  } catch (const NonFiniteError& e) {
    return e.what();
  }
  return "(no error)";
}

// A NaN rms_eps (metadata) makes the first RMSNorm NaN: named, with the metadata to blame.
TEST(FiniteCheck, NanRmsEpsStopsAtLayer0AttnNorm) {
  auto file = gguf::File::open(stories());
  Config c = Config::from_gguf(file);
  c.rms_eps = kNaN;
  const Loaded l(std::move(file), c);
  const auto s = with_finite_check(std::make_unique<Session>(l.model, 8));
  const std::vector<std::int32_t> ids = {1, 403, 407};
  const std::string e = error_of(*s, ids, false);
  EXPECT_NE(e.find("non-finite logits at position 2"), std::string::npos) << e;
  EXPECT_NE(e.find("first non-finite intermediate is layer 0 attn_norm (64 of 64 values"), std::string::npos) << e;
  EXPECT_NE(e.find("rms_eps"), std::string::npos) << e;
}

// A NaN weight in layer 2's down projection: layers 0 and 1 are finite, layer 2's ffn_out is not.
TEST(FiniteCheck, NanWeightStopsAtItsLayerAndTensor) {
  const auto bytes = test::damaged_gguf(stories(), "blk.2.ffn_down.weight", 5, kNaN);
  const Loaded l(gguf::File::parse(bytes, "damaged.gguf"));
  const std::vector<std::int32_t> ids = {1, 403, 407};
  Session unchecked(l.model, 8);
  unchecked.forward(ids);
  EXPECT_FALSE(all_finite(unchecked.logits())) << "the damage reaches the logits";
  const auto s = with_finite_check(std::make_unique<Session>(l.model, 8));
  const std::string e = error_of(*s, ids, false);
  EXPECT_NE(e.find("layer 2 ffn_out (1 of 64 values"), std::string::npos) << e;
  EXPECT_NE(e.find("blk.2.ffn_down.weight"), std::string::npos) << e;
}

// A NaN in one token's embedding row: the rows before it are finite, the error names that position.
TEST(FiniteCheck, NamesTheFirstNonFinitePositionOfABatch) {
  const auto bytes = test::damaged_gguf(stories(), "token_embd.weight", 7 * 64 + 3, kNaN);  // token 7's row
  const Loaded l(gguf::File::parse(bytes, "damaged.gguf"));
  const auto s = with_finite_check(std::make_unique<Session>(l.model, 8));
  const std::vector<std::int32_t> fine = {1, 403}, bad = {407, 7, 50};
  s->forward(fine, true);  // finite: no error
  const std::string e = error_of(*s, bad, true);
  EXPECT_NE(e.find("non-finite logits at position 3"), std::string::npos) << e;
  EXPECT_NE(e.find("intermediate is token_embd (1 of 64"), std::string::npos) << e;
}

TEST(FiniteCheck, FiniteLogitsPassThroughUnchanged) {
  const Loaded l(gguf::File::open(stories()));
  const std::vector<std::int32_t> ids = {1, 403, 407};
  Session plain(l.model, 8);
  const auto s = with_finite_check(std::make_unique<Session>(l.model, 8));
  plain.forward(ids, true);
  s->forward(ids, true);
  EXPECT_TRUE(std::equal(s->logits().begin(), s->logits().end(), plain.logits().begin(), plain.logits().end()));
  EXPECT_EQ(s->pos(), 3u);
}

}  // namespace
}  // namespace realizar
