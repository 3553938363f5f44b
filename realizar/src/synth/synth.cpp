// Model synthesis: preset shapes, the file type's tensor mix (Q4_K_M: ../shared/docs/quant-formats.md),
// random blocks whose scales keep every weight small (|w| <~ 0.05, like trained weights), norms = 1.
#include <cstring>
#include <random>

#include "trueno/ops.h"
#include "realizar/gguf.h"
#include "realizar/synth.h"
#include "util/strcat.h"

namespace realizar {
namespace {

using trueno::QuantType;

struct Shape {
  std::uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
};

Shape preset_shape(const std::string& p) {
  if (p == "tiny") return {256, 2, 4, 2, 768, 512, 2048};
  if (p == "llama-1b") return {2048, 22, 32, 4, 5632, 32000, 2048};   // TinyLlama 1.1B
  if (p == "llama-7b") return {4096, 32, 32, 32, 11008, 32000, 4096};  // Llama 2 7B
  if (p == "llama-13b") return {5120, 40, 40, 40, 13824, 32000, 4096};
  throw trueno::InvalidArgument(strcat("synth: unknown preset '", p, "'; valid: tiny, llama-1b, llama-7b, llama-13b"));
}

struct Mix {
  QuantType base, output, v_down_high;  // v_down_high: attn_v / ffn_down on the "more bits" layers
  std::uint32_t file_type;
};

Mix quant_mix(const std::string& q) {
  if (q == "f32") return {QuantType::F32, QuantType::F32, QuantType::F32, 0};
  if (q == "f16") return {QuantType::F16, QuantType::F16, QuantType::F16, 1};
  if (q == "q8_0") return {QuantType::Q8_0, QuantType::Q8_0, QuantType::Q8_0, 7};
  if (q == "q4_0") return {QuantType::Q4_0, QuantType::Q6_K, QuantType::Q4_0, 2};
  if (q == "q4_k_m") return {QuantType::Q4_K, QuantType::Q6_K, QuantType::Q6_K, 15};
  if (q == "q6_k") return {QuantType::Q6_K, QuantType::Q6_K, QuantType::Q6_K, 18};
  throw trueno::InvalidArgument(strcat("synth: unknown quantization '", q, "'; valid: f32, f16, q8_0, q4_0, q4_k_m, q6_k"));
}

// The Q4_K_M rule for attn_v / ffn_down: more bits on the first and last eighth and every third layer between.
bool high_bits_layer(std::uint32_t i, std::uint32_t n) { return i < n / 8 || i >= 7 * n / 8 || (i >= n / 8 && (i - n / 8) % 3 == 2); }

// Rows not a multiple of a k-quant's 256 fall back to Q8_0 (the common recipe uses Q5_0/Q8_0 there).
QuantType fit(QuantType t, std::uint64_t cols) {
  return cols % trueno::quant_info(t).block_elems == 0 ? t : QuantType::Q8_0;
}

void put_f16(std::byte* p, float v) {
  std::uint16_t h = 0;
  trueno::ops::f32_to_f16(std::span(&v, 1), std::span(&h, 1));
  std::memcpy(p, &h, 2);
}

// Random bytes, then each block's scales set so its values stay small.
void fill_random(QuantType t, std::span<std::byte> out, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto& info = trueno::quant_info(t);
  if (t == QuantType::F32 || t == QuantType::F16 || t == QuantType::BF16) {
    std::normal_distribution<float> n(0.0f, 0.02f);
    const std::size_t count = out.size() / info.block_bytes;
    for (std::size_t i = 0; i < count; ++i) {
      const float v = n(rng);
      if (t == QuantType::F32) std::memcpy(out.data() + 4 * i, &v, 4);
      else if (t == QuantType::F16) put_f16(out.data() + 2 * i, v);
      else {
        std::uint32_t b;
        std::memcpy(&b, &v, 4);
        const std::uint16_t h = static_cast<std::uint16_t>(b >> 16);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
    }
    return;
  }
  for (std::size_t i = 0; i + 8 <= out.size(); i += 8) {
    const std::uint64_t r = rng();
    std::memcpy(out.data() + i, &r, 8);
  }
  for (std::size_t off = 0; off + info.block_bytes <= out.size(); off += info.block_bytes) {
    std::byte* b = out.data() + off;
    switch (t) {
      case QuantType::Q4_0: put_f16(b, 0.006f); break;                      // (q - 8) * d
      case QuantType::Q8_0: put_f16(b, 0.0004f); break;                     // q * d
      case QuantType::Q4_K: case QuantType::Q5_K: put_f16(b, 6e-5f), put_f16(b + 2, 3e-4f); break;
      case QuantType::Q6_K: put_f16(b + 208, 2e-5f); break;                 // (q - 32) * sc * d
      default: break;
    }
  }
}

}  // namespace

namespace {
gguf::Writer build(const SynthOptions& o) {
  if (o.arch != "llama" && o.arch != "qwen2")
    throw trueno::InvalidArgument(strcat("synth: unknown architecture '", o.arch, "'; valid: llama, qwen2"));
  const Shape s = preset_shape(o.preset);
  const Mix mix = quant_mix(o.quant);
  const std::string a = o.arch + ".";
  const std::uint32_t hd = s.n_embd / s.n_head;
  gguf::Writer w;
  w.set_string("general.architecture", o.arch);
  w.set_string("general.name", strcat("synthetic ", o.arch, " ", o.preset, " ", o.quant, " (random weights)"));
  w.set_u32("general.file_type", mix.file_type);
  w.set_u32(a + "context_length", s.n_ctx);
  w.set_u32(a + "embedding_length", s.n_embd);
  w.set_u32(a + "block_count", s.n_layer);
  w.set_u32(a + "feed_forward_length", s.n_ff);
  w.set_u32(a + "attention.head_count", s.n_head);
  w.set_u32(a + "attention.head_count_kv", s.n_head_kv);
  w.set_u32(a + "rope.dimension_count", hd);
  w.set_f32(a + "rope.freq_base", o.arch == "qwen2" ? 1000000.0f : 10000.0f);
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  // Dummy SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens, then tokN.
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<std::int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    tokens.emplace_back(name), types.push_back(6);
  }
  while (tokens.size() < s.n_vocab) tokens.push_back(strcat("tok", tokens.size())), types.push_back(1);
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_f32_array("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f));
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);

  std::uint64_t tensor_seed = o.seed;
  auto add = [&](const std::string& name, std::vector<std::uint64_t> ne, QuantType t) {
    t = fit(t, ne[0]);
    const std::uint64_t seed = tensor_seed++ * 0x9E3779B97F4A7C15ull;
    w.add_tensor(name, std::move(ne), t, [t, seed](std::span<std::byte> out) { fill_random(t, out, seed); });
  };
  auto ones = [&](const std::string& name, std::uint64_t n) {
    std::vector<std::byte> b(n * 4);
    const float one = 1.0f;
    for (std::uint64_t i = 0; i < n; ++i) std::memcpy(b.data() + 4 * i, &one, 4);
    w.add_tensor(name, {n}, QuantType::F32, std::move(b));
  };
  const std::uint64_t d = s.n_embd, q = std::uint64_t{s.n_head} * hd, kv = std::uint64_t{s.n_head_kv} * hd;
  add("token_embd.weight", {d, s.n_vocab}, mix.base);
  for (std::uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string p = strcat("blk.", l, ".");
    const QuantType vd = high_bits_layer(l, s.n_layer) ? mix.v_down_high : mix.base;
    ones(p + "attn_norm.weight", d);
    add(p + "attn_q.weight", {d, q}, mix.base);
    add(p + "attn_k.weight", {d, kv}, mix.base);
    add(p + "attn_v.weight", {d, kv}, vd);
    add(p + "attn_output.weight", {q, d}, mix.base);
    if (o.arch == "qwen2") {
      add(p + "attn_q.bias", {q}, QuantType::F32);
      add(p + "attn_k.bias", {kv}, QuantType::F32);
      add(p + "attn_v.bias", {kv}, QuantType::F32);
    }
    ones(p + "ffn_norm.weight", d);
    add(p + "ffn_gate.weight", {d, s.n_ff}, mix.base);
    add(p + "ffn_up.weight", {d, s.n_ff}, mix.base);
    add(p + "ffn_down.weight", {s.n_ff, d}, vd);
  }
  ones("output_norm.weight", d);
  add("output.weight", {d, s.n_vocab}, mix.output);
  return w;
}
}  // namespace

std::uint64_t synthesized_size(const SynthOptions& o) { return build(o).file_size(); }

std::uint64_t synthesize(const SynthOptions& o, const std::string& path,
                         const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const gguf::Writer w = build(o);
  w.write(path, progress);
  return w.file_size();
}

}  // namespace realizar
