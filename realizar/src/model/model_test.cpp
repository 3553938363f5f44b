// Model structure from metadata: tied embeddings (no output.weight) and Llama-3 frequency factors
// (rope_freqs.weight), checked by building small files that differ only in that respect.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "realizar/model.h"

namespace realizar {
namespace {

constexpr std::uint32_t kEmbd = 32, kFF = 64, kVocab = 40, kHeads = 2;

std::vector<std::byte> f32_bytes(std::size_t n, std::uint64_t seed, float scale = 0.2f, float fixed = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<std::byte> b(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = fixed != 0 ? fixed : d(rng);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return b;
}

// A one-layer llama; output: "none" (tied), "copy" (= the embeddings), or "own"; rope_freqs: 0 = absent.
std::vector<std::byte> tiny_llama(const std::string& output, float rope_freq = 0) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  for (auto [k, v] : {std::pair<const char*, std::uint32_t>{"llama.embedding_length", kEmbd}, {"llama.block_count", 1},
                      {"llama.feed_forward_length", kFF}, {"llama.attention.head_count", kHeads}, {"llama.context_length", 64}})
    w.set_u32(k, v);
  using Q = trueno::QuantType;
  const auto embd = f32_bytes(kEmbd * kVocab, 1);
  w.add_tensor("token_embd.weight", {kEmbd, kVocab}, Q::F32, embd);
  w.add_tensor("output_norm.weight", {kEmbd}, Q::F32, f32_bytes(kEmbd, 0, 0, 1.0f));
  if (output == "copy") w.add_tensor("output.weight", {kEmbd, kVocab}, Q::F32, embd);
  if (output == "own") w.add_tensor("output.weight", {kEmbd, kVocab}, Q::F32, f32_bytes(kEmbd * kVocab, 99));
  if (rope_freq != 0) w.add_tensor("rope_freqs.weight", {kEmbd / kHeads / 2}, Q::F32, f32_bytes(kEmbd / kHeads / 2, 0, 0, rope_freq));
  std::uint64_t seed = 10;
  w.add_tensor("blk.0.attn_norm.weight", {kEmbd}, Q::F32, f32_bytes(kEmbd, 0, 0, 1.0f));
  w.add_tensor("blk.0.ffn_norm.weight", {kEmbd}, Q::F32, f32_bytes(kEmbd, 0, 0, 1.0f));
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output"})
    w.add_tensor(std::string("blk.0.") + n + ".weight", {kEmbd, kEmbd}, Q::F32, f32_bytes(kEmbd * kEmbd, seed++));
  w.add_tensor("blk.0.ffn_gate.weight", {kEmbd, kFF}, Q::F32, f32_bytes(kEmbd * kFF, seed++));
  w.add_tensor("blk.0.ffn_up.weight", {kEmbd, kFF}, Q::F32, f32_bytes(kEmbd * kFF, seed++));
  w.add_tensor("blk.0.ffn_down.weight", {kFF, kEmbd}, Q::F32, f32_bytes(kEmbd * kFF, seed++));
  return w.bytes();
}

std::vector<float> logits(const std::vector<std::byte>& bytes, Config* out_config = nullptr) {
  const auto f = gguf::File::parse(bytes, "tiny.gguf");
  const Model m(f, Config::from_gguf(f));
  if (out_config) *out_config = m.config();
  Session s(m, 8);
  const std::vector<std::int32_t> ids = {1, 7, 3, 9, 2};
  s.forward(ids, true);
  return {s.logits().begin(), s.logits().end()};
}

TEST(Model, TiedEmbeddingsAreTheLmHead) {
  Config c;
  const auto tied = logits(tiny_llama("none"), &c);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(tied, logits(tiny_llama("copy")));  // bit for bit: the same matrix
  EXPECT_NE(tied, logits(tiny_llama("own")));
}

TEST(Model, RopeFrequencyFactorsDivideTheAngles) {
  Config c;
  const auto plain = logits(tiny_llama("none"));
  EXPECT_EQ(logits(tiny_llama("none", 1.0f), &c), plain);  // factors of 1 change nothing
  EXPECT_TRUE(c.has_rope_freqs);
  EXPECT_NE(logits(tiny_llama("none", 4.0f)), plain);
}

}  // namespace
}  // namespace realizar
