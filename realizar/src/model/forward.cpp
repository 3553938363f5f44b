// The CPU forward pass, one batch of T tokens at a time (prefill: T = prompt length; decode: T = 1):
//   x = embed(tokens)
//   per layer:  h = rmsnorm(x) ; q,k,v = Wq h (+bq), Wk h (+bk), Wv h (+bv) ; rope(q, k) ; cache k, v
//               x += Wo attention(q, cache)      (causal, GQA: KV head = head / (n_head / n_head_kv))
//               h = rmsnorm(x) ; x += Wdown (silu(Wgate h) * (Wup h))
//   logits = Wout rmsnorm(x)
// Matrices stay quantized in the mapped file: trueno's fused kernels read each weight once per batch.
//
// Note [F16 attention]
// The KV cache holds f16 (half the memory of f32, the usual choice), and the attention rounds q and the
// softmax weights to f16 before their products, as the reference engine whose logits
// ../shared/testdata/reference records does: with f32 there instead, logits of the f32 stories260K
// differ from it by up to 2.4e-2; with these roundings by up to 6e-3.
//
// Note [Reference arithmetic]
// Two more of the reference's choices, cheap to share and measured to matter (max |d| of the f16
// stories260K's logits 4.1e-2 -> 1.4e-2, tiny-llama-f16 6.9e-4 -> 3.8e-4): activations are rounded to
// f16 before a product with F16 weights, and RMSNorm accumulates its sum of squares in order in f32
// (the rounded normalized values feed those f16 roundings, so a last-ulp difference there flips them).
#include <cmath>
#include <cstdint>

#include "realizar/model.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "trueno/threads.h"
#include "util/strcat.h"

namespace realizar {
namespace ops = trueno::ops;
namespace {

// Y[T][rows] = X[T][cols] W^T. For F16 weights X is rounded to f16 first (Note [Reference arithmetic]).
void linear(const Matrix& w, const std::vector<float>& x, std::size_t T, std::vector<float>& y) {
  y.resize(T * w.rows);
  const std::size_t n = T * w.cols;
  std::span<const float> in = std::span(x).first(n);
  thread_local std::vector<float> rounded;
  thread_local std::vector<std::uint16_t> half;
  if (w.type == trueno::QuantType::F16) {
    half.resize(n), rounded.resize(n);
    ops::f32_to_f16(in, half);
    ops::f16_to_f32(half, rounded);
    in = rounded;
  }
  if (T == 1)
    trueno::quant_matvec(w.type, w.data, w.rows, w.cols, in, y);
  else
    trueno::quant_matmul(w.type, w.data, w.rows, w.cols, in, T, y);
}

// The sum of squares is accumulated in order in f32 (Note [Reference arithmetic]); rows in parallel.
void rmsnorm_rows(const std::vector<float>& x, const std::vector<float>& weight, float eps, std::size_t T,
                  std::vector<float>& out) {
  const std::size_t d = weight.size();
  out.resize(T * d);
  const auto row = [&](std::size_t t) {
    const float* xt = x.data() + t * d;
    float* yt = out.data() + t * d;
    float ss = 0.0f;
    for (std::size_t i = 0; i < d; ++i) ss += xt[i] * xt[i];
    const float scale = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    for (std::size_t i = 0; i < d; ++i) yt[i] = (xt[i] * scale) * weight[i];
  };
  if (T == 1)
    row(0);
  else
    trueno::parallel_for(T, row);
}

void add_bias(std::vector<float>& y, const std::vector<float>& b, std::size_t T) {
  if (b.empty()) return;
  for (std::size_t t = 0; t < T; ++t) ops::add(std::span(y).subspan(t * b.size(), b.size()), b, std::span(y).subspan(t * b.size(), b.size()));
}

}  // namespace

Session::Session(const Model& m, std::size_t n_ctx) : m_(m), c_(m.config()), n_ctx_(n_ctx) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
  const std::size_t kv = std::size_t{c_.n_layer} * n_ctx * c_.n_head_kv * c_.head_dim;
  k_.assign(kv, 0);
  v_.assign(kv, 0);
}

// Rotates each head's first rope_dim values by position-dependent angles theta_i = pos * base^(-2i/rope_dim)
// (divided by rope_freqs[i] when present); pairs (2i, 2i+1) for llama, (i, i + rope_dim/2) for NEOX.
// The angles are computed as the reference engine does, in float by repeated multiplication
// (theta_{i+1} = theta_i * base^(-2/rope_dim)), so that q and k round to f16 the same way (Note [F16 attention]).
void Session::rope(float* v, std::size_t n_heads, std::size_t pos) const {
  const std::size_t half = c_.rope_dim / 2;
  const float theta_scale = std::pow(c_.rope_base, -2.0f / static_cast<float>(c_.rope_dim));
  float theta = static_cast<float>(pos);
  for (std::size_t i = 0; i < half; ++i, theta *= theta_scale) {
    const float t = m_.rope_freqs.empty() ? theta : theta / m_.rope_freqs[i];
    const float cs = std::cos(t), sn = std::sin(t);
    for (std::size_t h = 0; h < n_heads; ++h) {
      float* p = v + h * c_.head_dim;
      const std::size_t a = c_.rope_neox ? i : 2 * i, b = c_.rope_neox ? i + half : 2 * i + 1;
      const float x0 = p[a], x1 = p[b];
      p[a] = x0 * cs - x1 * sn;
      p[b] = x0 * sn + x1 * cs;
    }
  }
}

// att[T][n_head * hd]: for token t (position pos_ + t) and head h, softmax(q . k_j / sqrt(hd)) over
// j <= pos_ + t, times v_j. Heads x tokens are split across the thread pool.
void Session::attention(std::size_t layer, std::size_t T) {
  const std::size_t hd = c_.head_dim, nh = c_.n_head, group = c_.n_head / c_.n_head_kv;
  const std::size_t kv_row = std::size_t{c_.n_head_kv} * hd, n_all = pos_ + T;
  const std::size_t base = layer * n_ctx_ * kv_row;
  kf_.resize(n_all * kv_row), vf_.resize(n_all * kv_row);
  ops::f16_to_f32(std::span(k_).subspan(base, n_all * kv_row), kf_);
  ops::f16_to_f32(std::span(v_).subspan(base, n_all * kv_row), vf_);
  att_.resize(T * nh * hd);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  trueno::parallel_for(T * nh, [&](std::size_t task) {
    const std::size_t t = task / nh, h = task % nh, kvh = h / group, n = pos_ + t + 1;
    thread_local std::vector<float> s, qh;
    thread_local std::vector<std::uint16_t> half;
    s.resize(n), qh.resize(hd), half.resize(std::max(n, hd));
    ops::f32_to_f16(std::span(q_).subspan((t * nh + h) * hd, hd), std::span(half).first(hd));
    ops::f16_to_f32(std::span(half).first(hd), qh);
    // scores = K_h q / sqrt(hd) and out = s V_h as one matrix op each (a dot call per position cost
    // more than the arithmetic at long prompts: 4M calls per layer at T = 512).
    ops::matvec(n, hd, kf_.data() + kvh * hd, kv_row, qh, s);
    ops::scale(s, scale, s);
    ops::softmax(s, s);
    ops::f32_to_f16(s, std::span(half).first(n));
    ops::f16_to_f32(std::span(half).first(n), s);
    ops::matmul(1, hd, n, s.data(), n, vf_.data() + kvh * hd, kv_row, att_.data() + (t * nh + h) * hd, hd);
  });
}

void Session::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  const std::size_t T = tokens.size(), d = c_.n_embd;
  if (T == 0) throw trueno::InvalidArgument("forward: no tokens");
  if (pos_ + T > n_ctx_)
    throw trueno::InvalidArgument(strcat("forward: ", pos_, " + ", T, " tokens exceed the context size ", n_ctx_));
  x_.resize(T * d);
  for (std::size_t t = 0; t < T; ++t) {
    const auto id = tokens[t];
    if (id < 0 || static_cast<std::uint32_t>(id) >= c_.n_vocab)
      throw trueno::InvalidArgument(strcat("forward: token id ", id, " is outside the vocabulary [0, ", c_.n_vocab, ")"));
    const Matrix& e = m_.token_embd;
    const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols);
    trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(id) * rb, rb), e.cols),
                       std::span(x_).subspan(t * d, d));
  }
  const std::size_t kv_row = std::size_t{c_.n_head_kv} * c_.head_dim;
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const LayerWeights& w = m_.layers[l];
    rmsnorm_rows(x_, w.attn_norm, c_.rms_eps, T, xn_);
    if (T == 1 && w.wq.type != trueno::QuantType::F16 && w.wk.type != trueno::QuantType::F16 &&
        w.wv.type != trueno::QuantType::F16) {
      // Decode: Q, K and V from one quantization of xn and one pool hand-off (quant_matvec_multi).
      q_.resize(w.wq.rows), k_new_.resize(w.wk.rows), v_new_.resize(w.wv.rows);
      const trueno::QuantMatvecPart parts[3] = {{w.wq.type, w.wq.data, w.wq.rows, q_},
                                                {w.wk.type, w.wk.data, w.wk.rows, k_new_},
                                                {w.wv.type, w.wv.data, w.wv.rows, v_new_}};
      trueno::quant_matvec_multi(parts, d, std::span(xn_).first(d));
    } else {
      linear(w.wq, xn_, T, q_);
      linear(w.wk, xn_, T, k_new_);
      linear(w.wv, xn_, T, v_new_);
    }
    add_bias(q_, w.bq, T), add_bias(k_new_, w.bk, T), add_bias(v_new_, w.bv, T);
    for (std::size_t t = 0; t < T; ++t) {
      rope(q_.data() + t * c_.n_head * c_.head_dim, c_.n_head, pos_ + t);
      rope(k_new_.data() + t * kv_row, c_.n_head_kv, pos_ + t);
    }
    const std::size_t at = (l * n_ctx_ + pos_) * kv_row;
    ops::f32_to_f16(std::span(k_new_).first(T * kv_row), std::span(k_).subspan(at, T * kv_row));
    ops::f32_to_f16(std::span(v_new_).first(T * kv_row), std::span(v_).subspan(at, T * kv_row));
    attention(l, T);
    linear(w.wo, att_, T, proj_);
    ops::add(x_, proj_, x_);

    rmsnorm_rows(x_, w.ffn_norm, c_.rms_eps, T, xn_);
    if (T == 1 && w.gate.type == w.up.type) {
      gate_.resize(c_.n_ff);
      trueno::quant_gate_up_swiglu(w.gate.type, w.gate.data, w.up.data, c_.n_ff, d, std::span(xn_).first(d), gate_);
    } else {
      linear(w.gate, xn_, T, gate_);
      linear(w.up, xn_, T, up_);
      ops::swiglu(gate_, up_, gate_);
    }
    linear(w.down, gate_, T, proj_);
    ops::add(x_, proj_, x_);
  }
  // Logits for every token (teacher forcing) or only the last (generation).
  const std::size_t first = all_logits ? 0 : T - 1, n = T - first;
  std::vector<float> last(x_.begin() + first * d, x_.end());
  rmsnorm_rows(last, m_.output_norm, c_.rms_eps, n, xn_);
  linear(m_.output, xn_, n, logits_);
  pos_ += T;
}

}  // namespace realizar

namespace realizar {

std::string Session::backend_name() const { return std::string(trueno::name(trueno::current_backend())); }

std::unique_ptr<Sequence> make_sequence(const Model& m, std::size_t n_ctx, std::optional<trueno::Backend> backend,
                                        const CudaOptions& cuda) {
  if (backend == trueno::Backend::CUDA) return make_cuda_sequence(m, n_ctx, cuda);
  return std::make_unique<Session>(m, n_ctx);
}

}  // namespace realizar
