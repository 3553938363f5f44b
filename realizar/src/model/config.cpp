// Model configuration from GGUF metadata ({arch}.* keys), for the supported architectures.
#include "realizar/model.h"
#include "util/strcat.h"

namespace realizar {
namespace {

constexpr const char* kSupported = "llama (Llama 2/3, Mistral, TinyLlama), qwen2";

std::uint32_t u32(const gguf::File& f, const std::string& key, std::optional<std::uint64_t> fallback = {}) {
  const std::uint64_t v = f.get_uint(key, fallback);
  if (v > 0xffffffffu) throw FormatError(strcat(f.path(), ": metadata '", key, "' = ", v, " is out of range"));
  return static_cast<std::uint32_t>(v);
}

}  // namespace

Config Config::from_gguf(const gguf::File& f) {
  Config c;
  c.arch_name = f.get_string("general.architecture");
  if (c.arch_name == "llama") c.arch = Arch::Llama;
  else if (c.arch_name == "qwen2") c.arch = Arch::Qwen2, c.rope_neox = true;
  else throw FormatError(strcat(f.path(), ": architecture '", c.arch_name, "' is not supported; supported: ", kSupported));
  const std::string a = c.arch_name + ".";
  c.n_embd = u32(f, a + "embedding_length");
  c.n_layer = u32(f, a + "block_count");
  c.n_ff = u32(f, a + "feed_forward_length");
  c.n_head = u32(f, a + "attention.head_count");
  c.n_head_kv = u32(f, a + "attention.head_count_kv", c.n_head);
  c.n_ctx_train = u32(f, a + "context_length", 2048);
  if (c.n_head == 0 || c.n_head_kv == 0 || c.n_head % c.n_head_kv != 0 || c.n_embd % c.n_head != 0)
    throw FormatError(strcat(f.path(), ": ", c.n_head, " attention heads, ", c.n_head_kv, " KV heads and width ", c.n_embd,
                             " do not fit (heads must divide the width, KV heads the heads)"));
  c.head_dim = u32(f, a + "attention.key_length", c.n_embd / c.n_head);
  c.rope_dim = u32(f, a + "rope.dimension_count", c.head_dim);
  if (c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    throw FormatError(strcat(f.path(), ": rope dimension ", c.rope_dim, " must be even and at most the head size ", c.head_dim));
  c.rope_base = static_cast<float>(f.get_float(a + "rope.freq_base", 10000.0));
  c.rms_eps = static_cast<float>(f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5));
  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr) throw FormatError(strcat(f.path(), ": missing tensor 'token_embd.weight'"));
  c.n_vocab = u32(f, a + "vocab_size", embd->ne.size() > 1 ? embd->ne[1] : 0);
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.has_rope_freqs = f.find_tensor("rope_freqs.weight") != nullptr;
  return c;
}

std::string Config::describe() const {
  return strcat("architecture: ", arch_name, "\n", "layers: ", n_layer, ", width: ", n_embd, ", FFN: ", n_ff,
                ", vocabulary: ", n_vocab, "\n", "heads: ", n_head, " (KV heads ", n_head_kv, ", head size ", head_dim,
                ")\n", "RoPE: ", rope_neox ? "NEOX" : "normal", ", base ", rope_base, ", dims ", rope_dim,
                has_rope_freqs ? ", frequency factors (rope_freqs.weight)" : "", "\n", "RMS epsilon: ", rms_eps,
                ", training context: ", n_ctx_train, tied_embeddings ? ", LM head tied to the embeddings" : "", "\n");
}

std::uint64_t bytes_per_token(const gguf::File& f, const Config& c) {
  std::uint64_t total = 0;
  for (const auto& t : f.tensors()) {
    if (t.name == "token_embd.weight") {
      total += t.bytes / std::max<std::uint64_t>(1, t.rows());  // one row looked up
      if (c.tied_embeddings) total += t.bytes;                   // and the whole table as the LM head
    } else {
      total += t.bytes;
    }
  }
  return total;
}

}  // namespace realizar
