// The model's weights: views into the mapped GGUF file, each checked for presence, type and shape.
#include "realizar/model.h"
#include "util/strcat.h"

namespace realizar {
namespace {

const gguf::TensorInfo& need(const gguf::File& f, const std::string& name) {
  if (const auto* t = f.find_tensor(name)) return *t;
  throw FormatError(strcat(f.path(), ": missing tensor '", name, "'"));
}

Matrix matrix(const gguf::File& f, const std::string& name, std::size_t rows, std::size_t cols) {
  const auto& t = need(f, name);
  if (t.ne.size() != 2 || t.ne[0] != cols || t.ne[1] != rows)
    throw FormatError(strcat(f.path(), ": tensor '", name, "' has shape ", t.ne.size() > 1 ? strcat(t.ne[0], "x", t.ne[1]) : strcat(t.ne[0]),
                             " (ne), expected ", cols, "x", rows));
  if (t.type == trueno::QuantType::Q8_K)
    throw FormatError(strcat(f.path(), ": tensor '", name, "' is q8_k, an activation format"));
  return {t.type, t.data, rows, cols};
}

// Small vectors (norms, biases) as f32, whatever their stored type.
std::vector<float> vec(const gguf::File& f, const std::string& name, std::size_t n) {
  const auto& t = need(f, name);
  if (t.elements() != n) throw FormatError(strcat(f.path(), ": tensor '", name, "' has ", t.elements(), " elements, expected ", n));
  std::vector<float> out(n);
  trueno::dequantize(trueno::QuantRow::view(t.type, t.data, n), out);
  return out;
}

}  // namespace

Model::Model(const gguf::File& f, Config c) : file_(&f), c_(std::move(c)) {
  const std::size_t d = c_.n_embd, q = std::size_t{c_.n_head} * c_.head_dim, kv = std::size_t{c_.n_head_kv} * c_.head_dim;
  token_embd = matrix(f, "token_embd.weight", c_.n_vocab, d);
  output = c_.tied_embeddings ? token_embd : matrix(f, "output.weight", c_.n_vocab, d);
  output_norm = vec(f, "output_norm.weight", d);
  if (c_.has_rope_freqs) rope_freqs = vec(f, "rope_freqs.weight", c_.rope_dim / 2);
  for (std::uint32_t l = 0; l < c_.n_layer; ++l) {
    const std::string p = strcat("blk.", l, ".");
    LayerWeights w;
    w.attn_norm = vec(f, p + "attn_norm.weight", d);
    w.ffn_norm = vec(f, p + "ffn_norm.weight", d);
    w.wq = matrix(f, p + "attn_q.weight", q, d);
    w.wk = matrix(f, p + "attn_k.weight", kv, d);
    w.wv = matrix(f, p + "attn_v.weight", kv, d);
    w.wo = matrix(f, p + "attn_output.weight", d, q);
    if (c_.arch == Arch::Qwen2) {
      w.bq = vec(f, p + "attn_q.bias", q);
      w.bk = vec(f, p + "attn_k.bias", kv);
      w.bv = vec(f, p + "attn_v.bias", kv);
    }
    w.gate = matrix(f, p + "ffn_gate.weight", c_.n_ff, d);
    w.up = matrix(f, p + "ffn_up.weight", c_.n_ff, d);
    w.down = matrix(f, p + "ffn_down.weight", d, c_.n_ff);
    layers.push_back(std::move(w));
  }
}

}  // namespace realizar
