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
// tests/data/reference records does: with f32 there instead, logits of the f32 stories260K
// differ from it by up to 2.4e-2; with these roundings by up to 6e-3.
//
// Note [Reference arithmetic]
// Two more of the reference's choices, cheap to share and measured to matter (max |d| of the f16
// stories260K's logits 4.1e-2 -> 1.4e-2, tiny-llama-f16 6.9e-4 -> 3.8e-4): activations are rounded to
// f16 before a product with F16 weights, and RMSNorm accumulates its sum of squares in order in f32
// (the rounded normalized values feed those f16 roundings, so a last-ulp difference there flips them).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/forward_rows.h"
#include "model/step_checks.h"
#include "realizar/kv_cache.h"
#include "realizar/model.h"
#include "realizar/recorder.h"
#include "trueno/ops.h"
#include "trueno/quant.h"
#include "trueno/threads.h"
#include "util/strcat.h"

namespace realizar {
namespace ops = trueno::ops;
namespace {

using Packed = std::optional<trueno::PackedQuantMatrix>;

// The packed copy of a matrix for a decode step (Note [Packed CPU weights]), or null.
const trueno::PackedQuantMatrix* packed(const PackedWeights* pw, const Packed PackedWeights::Layer::*which, std::size_t l) {
  if (pw == nullptr) return nullptr;
  const Packed& p = pw->layers[l].*which;
  return p ? &*p : nullptr;
}

// Y[T][rows] = X[T][cols] W^T. For F16 weights X is rounded to f16 first (Note [Reference arithmetic]).
// wp: w packed (T == 1 only; the same results), or null.
void linear(const Matrix& w, const std::vector<float>& x, std::size_t T, std::vector<float>& y,
            const trueno::PackedQuantMatrix* wp = nullptr) {
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
  if (T == 1 && wp != nullptr)
    trueno::quant_matvec(*wp, in, y);
  else if (T == 1)
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

namespace {

std::shared_ptr<KvPool> own_pool(const Model& m, std::size_t n_ctx) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
  return std::make_shared<KvPool>(m.config(), n_ctx, 1);  // one block: the whole context
}

}  // namespace

Session::Session(const Model& m, std::size_t n_ctx) : Session(m, n_ctx, own_pool(m, n_ctx)) { cache_.reserve(n_ctx); }

Session::Session(const Model& m, std::size_t n_ctx, std::shared_ptr<KvPool> pool)
    : m_(m), c_(m.config()), n_ctx_(n_ctx), cache_(std::move(pool)) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
}

void Session::reset() {
  pos_ = 0;
  if (cache_.pool().total_blocks() > 1) cache_.release();  // a shared pool gets the blocks back
}

// Rotates each head's first rope_dim values by position-dependent angles theta_i = pos * base^(-2i/rope_dim)
// (divided by rope_freqs[i] when present); pairs (2i, 2i+1) for llama, (i, i + rope_dim/2) for NEOX.
// The angles are computed as the reference engine does, in float by repeated multiplication
// (theta_{i+1} = theta_i * base^(-2/rope_dim)), so that q and k round to f16 the same way (Note [F16 attention]).
namespace {

void rope(const Model& m, float* v, std::size_t n_heads, std::size_t pos) {
  const Config& c_ = m.config();
  const Model& m_ = m;
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

// att[T][n_head * hd]: for row t (position rows[t].pos) and head h, softmax(q . k_j / sqrt(hd)) over
// j <= pos, times v_j, reading row t's cache. Consecutive rows of one cache (a prompt batch) widen it
// once; heads x rows are split across the thread pool.
void attention(const Model& m, std::size_t layer, std::span<const Row> rows, CpuScratch& w) {
  const Config& c_ = m.config();
  const std::size_t T = rows.size(), hd = c_.head_dim, nh = c_.n_head, group = c_.n_head / c_.n_head_kv;
  const std::size_t kv_row = std::size_t{c_.n_head_kv} * hd;
  w.att.resize(T * nh * hd);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (std::size_t r0 = 0; r0 < T;) {
    std::size_t r1 = r0 + 1, n_all = rows[r0].pos + 1;
    while (r1 < T && rows[r1].cache == rows[r0].cache) n_all = std::max(n_all, rows[r1].pos + 1), ++r1;
    w.kf.resize(n_all * kv_row), w.vf.resize(n_all * kv_row);
    rows[r0].cache->widen(layer, n_all, w.kf.data(), w.vf.data());
    trueno::parallel_for((r1 - r0) * nh, [&](std::size_t task) {
      const std::size_t t = r0 + task / nh, h = task % nh, kvh = h / group, n = rows[t].pos + 1;
      thread_local std::vector<float> s, qh;
      thread_local std::vector<std::uint16_t> half;
      s.resize(n), qh.resize(hd), half.resize(std::max(n, hd));
      ops::f32_to_f16(std::span(w.q).subspan((t * nh + h) * hd, hd), std::span(half).first(hd));
      ops::f16_to_f32(std::span(half).first(hd), qh);
      // scores = K_h q / sqrt(hd) and out = s V_h as one matrix op each (a dot call per position cost
      // more than the arithmetic at long prompts: 4M calls per layer at T = 512).
      ops::matvec(n, hd, w.kf.data() + kvh * hd, kv_row, qh, s);
      ops::scale(s, scale, s);
      ops::softmax(s, s);
      ops::f32_to_f16(s, std::span(half).first(n));
      ops::f16_to_f32(std::span(half).first(n), s);
      ops::matmul(1, hd, n, s.data(), n, w.vf.data() + kvh * hd, kv_row, w.att.data() + (t * nh + h) * hd, hd);
    });
    r0 = r1;
  }
}

// Records the last of `rows` rows of v when there is a recorder (realizar/recorder.h).
void tap(Recorder* r, int layer, std::string_view tensor, const std::vector<float>& v, std::size_t rows) {
  if (r == nullptr) return;
  const std::size_t width = v.size() / rows;
  r->record(layer, tensor, std::span(v).subspan((rows - 1) * width, width));
}

// x[T][d] = the tokens' embedding rows. A TP rank holds rows [vocab_begin, + its rows): it writes those,
// zeros for the others, and the sum over ranks gives every rank every row exactly (x + 0 = x).
void embed(const Model& m, std::span<const Row> rows, std::vector<float>& x, const TpRank* tp) {
  const Matrix& e = m.token_embd;
  const std::size_t T = rows.size(), d = e.cols, first = tp ? tp->vocab_begin : 0;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols);
  x.resize(T * d);
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t id = static_cast<std::size_t>(rows[t].token);
    const std::span<float> xt = std::span(x).subspan(t * d, d);
    if (id < first || id - first >= e.rows)
      std::fill(xt.begin(), xt.end(), 0.0f);
    else
      trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan((id - first) * rb, rb), e.cols), xt);
  }
  if (tp) tp->comm->all_reduce_sum(x.data(), T * d);
}

// logits[n][n_vocab] from a TP rank's slice local[n][its rows]: each rank's slice padded to vocab_slice
// rows, gathered [rank][n][vocab_slice], and laid out by vocabulary id.
void gather_logits(const TpRank& tp, std::size_t n, std::size_t rows, std::vector<float>& local, std::vector<float>& logits) {
  const std::size_t S = tp.vocab_slice, R = static_cast<std::size_t>(tp.comm->size());
  thread_local std::vector<float> padded, all;
  padded.assign(n * S, 0.0f);
  for (std::size_t t = 0; t < n; ++t) std::copy_n(local.begin() + t * rows, rows, padded.begin() + t * S);
  all.resize(R * n * S);
  tp.comm->all_gather(padded.data(), all.data(), n * S);
  logits.resize(n * tp.n_vocab);
  for (std::size_t r = 0; r < R; ++r) {
    const std::size_t v0 = r * S, width = std::min(S, tp.n_vocab - std::min(tp.n_vocab, v0));
    for (std::size_t t = 0; t < n; ++t) std::copy_n(all.begin() + (r * n + t) * S, width, logits.begin() + t * tp.n_vocab + v0);
  }
}

}  // namespace

// The forward pass over rows (tokens at their positions, each with its cache, already reserved).
void forward_rows(const Model& m, std::span<const Row> rows, std::size_t first_logits, CpuScratch& w, Recorder* rec,
                  const TpRank* tp) {
  const Config& c_ = m.config();
  const std::size_t T = rows.size(), d = c_.n_embd;
  embed(m, rows, w.x, tp);
  tap(rec, kNoLayer, "token_embd", w.x, T);
  const std::size_t kv_row = std::size_t{c_.n_head_kv} * c_.head_dim;
  const PackedWeights* pw = T == 1 ? m.cpu_packed() : nullptr;  // decode only: prefill reads the file
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const LayerWeights& lw = m.layers[l];
    const int li = static_cast<int>(l);
    rmsnorm_rows(w.x, lw.attn_norm, c_.rms_eps, T, w.xn);
    tap(rec, li, "attn_norm", w.xn, T);
    if (T == 1 && lw.wq.type != trueno::QuantType::F16 && lw.wk.type != trueno::QuantType::F16 &&
        lw.wv.type != trueno::QuantType::F16) {
      // Decode: Q, K and V from one quantization of xn and one pool hand-off (quant_matvec_multi).
      w.q.resize(lw.wq.rows), w.k_new.resize(lw.wk.rows), w.v_new.resize(lw.wv.rows);
      const trueno::QuantMatvecPart parts[3] = {
          {lw.wq.type, lw.wq.data, lw.wq.rows, w.q, packed(pw, &PackedWeights::Layer::wq, l)},
          {lw.wk.type, lw.wk.data, lw.wk.rows, w.k_new, packed(pw, &PackedWeights::Layer::wk, l)},
          {lw.wv.type, lw.wv.data, lw.wv.rows, w.v_new, packed(pw, &PackedWeights::Layer::wv, l)}};
      trueno::quant_matvec_multi(parts, d, std::span(w.xn).first(d));
    } else {
      linear(lw.wq, w.xn, T, w.q);
      linear(lw.wk, w.xn, T, w.k_new);
      linear(lw.wv, w.xn, T, w.v_new);
    }
    add_bias(w.q, lw.bq, T), add_bias(w.k_new, lw.bk, T), add_bias(w.v_new, lw.bv, T);
    tap(rec, li, "q", w.q, T), tap(rec, li, "k", w.k_new, T), tap(rec, li, "v", w.v_new, T);
    for (std::size_t t = 0; t < T; ++t) {
      rope(m, w.q.data() + t * c_.n_head * c_.head_dim, c_.n_head, rows[t].pos);
      rope(m, w.k_new.data() + t * kv_row, c_.n_head_kv, rows[t].pos);
      ops::f32_to_f16(std::span(w.k_new).subspan(t * kv_row, kv_row), std::span(rows[t].cache->k(l, rows[t].pos), kv_row));
      ops::f32_to_f16(std::span(w.v_new).subspan(t * kv_row, kv_row), std::span(rows[t].cache->v(l, rows[t].pos), kv_row));
    }
    tap(rec, li, "q_rope", w.q, T), tap(rec, li, "k_rope", w.k_new, T);
    attention(m, l, rows, w);
    tap(rec, li, "attn_out", w.att, T);
    linear(lw.wo, w.att, T, w.proj, packed(pw, &PackedWeights::Layer::wo, l));
    if (tp) tp->comm->all_reduce_sum(w.proj.data(), T * d);  // O is row-parallel: the ranks' partial sums
    ops::add(w.x, w.proj, w.x);
    tap(rec, li, "ffn_inp", w.x, T);

    rmsnorm_rows(w.x, lw.ffn_norm, c_.rms_eps, T, w.xn);
    tap(rec, li, "ffn_norm", w.xn, T);
    if (T == 1 && lw.gate.type == lw.up.type) {
      w.gate.resize(c_.n_ff);
      trueno::quant_gate_up_swiglu(lw.gate.type, lw.gate.data, lw.up.data, c_.n_ff, d, std::span(w.xn).first(d), w.gate, {},
                                   packed(pw, &PackedWeights::Layer::gate, l), packed(pw, &PackedWeights::Layer::up, l));
    } else {  // the same products and the same swiglu kernel as the fused call: equal bit for bit
      linear(lw.gate, w.xn, T, w.gate);
      linear(lw.up, w.xn, T, w.up);
      ops::swiglu(w.gate, w.up, w.gate);
    }
    tap(rec, li, "ffn_act", w.gate, T);
    linear(lw.down, w.gate, T, w.proj, packed(pw, &PackedWeights::Layer::down, l));
    if (tp) tp->comm->all_reduce_sum(w.proj.data(), T * d);  // down is row-parallel too
    tap(rec, li, "ffn_out", w.proj, T);
    ops::add(w.x, w.proj, w.x);
    tap(rec, li, "l_out", w.x, T);
  }
  const std::size_t n = T - first_logits;
  std::vector<float> last(w.x.begin() + first_logits * d, w.x.end());
  rmsnorm_rows(last, m.output_norm, c_.rms_eps, n, w.xn);
  tap(rec, kNoLayer, "output_norm", w.xn, n);
  linear(m.output, w.xn, n, w.logits, pw != nullptr && pw->output ? &*pw->output : nullptr);
  if (tp) {  // vocabulary-parallel LM head: each rank's rows of the logits, gathered
    thread_local std::vector<float> local;
    local.swap(w.logits);
    gather_logits(*tp, n, m.output.rows, local, w.logits);
  }
  tap(rec, kNoLayer, "logits", w.logits, n);
}

namespace {

void check_tokens(const Config& c, std::span<const std::int32_t> tokens) {
  for (const auto id : tokens)
    if (id < 0 || static_cast<std::uint32_t>(id) >= c.n_vocab)
      throw trueno::InvalidArgument(strcat("forward: token id ", id, " is outside the vocabulary [0, ", c.n_vocab, ")"));
}

}  // namespace

void Session::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  const std::size_t T = tokens.size();
  check_forward(c_, pos_, n_ctx_, tokens);
  cache_.reserve(pos_ + T);
  rows_.resize(T);
  for (std::size_t t = 0; t < T; ++t) rows_[t] = {tokens[t], pos_ + t, &cache_};
  // Logits for every token (teacher forcing) or only the last (generation).
  forward_rows(m_, rows_, all_logits ? 0 : T - 1, w_, recorder_);
  logits_.swap(w_.logits);
  pos_ += T;
}

CpuBatch::CpuBatch(const Model& m) : m_(m) {}

void CpuBatch::step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) {
  const std::size_t B = seqs.size(), V = m_.config().n_vocab;
  if (B != tokens.size()) throw trueno::InvalidArgument(strcat("batch: ", B, " sequences but ", tokens.size(), " tokens"));
  if (B == 0) return;
  check_tokens(m_.config(), tokens);
  rows_.resize(B);
  sessions_.resize(B);
  for (std::size_t i = 0; i < B; ++i) {
    sessions_[i] = dynamic_cast<Session*>(seqs[i]);
    if (sessions_[i] == nullptr) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " is not a CPU sequence (", seqs[i]->backend_name(), ")"));
    Session& s = *sessions_[i];
    if (&s.m_ != &m_) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " belongs to another model"));
    if (s.pos_ + 1 > s.n_ctx_) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " is full (", s.n_ctx_, " positions)"));
    for (std::size_t j = 0; j < i; ++j)
      if (seqs[j] == seqs[i]) throw trueno::InvalidArgument(strcat("batch: sequence ", i, " appears twice"));
    s.cache_.reserve(s.pos_ + 1);  // may throw OutOfKvBlocks: nothing has advanced yet
    rows_[i] = {tokens[i], s.pos_, &s.cache_};
  }
  forward_rows(m_, rows_, 0, w_, nullptr);
  for (std::size_t i = 0; i < B; ++i) {
    Session& s = *sessions_[i];
    s.logits_.assign(w_.logits.begin() + i * V, w_.logits.begin() + (i + 1) * V);
    ++s.pos_;
  }
}

}  // namespace realizar

namespace realizar {

std::string Session::backend_name() const { return std::string(trueno::name(trueno::current_backend())); }

std::unique_ptr<Sequence> make_sequence(const Model& m, std::size_t n_ctx, std::optional<trueno::Device> device,
                                        const CudaOptions& cuda) {
  if (device) return upload_weights(m, *device, cuda)->new_sequence(n_ctx);
  return std::make_unique<Session>(m, n_ctx);
}

}  // namespace realizar
