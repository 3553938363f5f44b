// The forward pass on a CUDA device, one token at a time with the decode kernels (src/cuda/ops): the
// same steps as the CPU pass (forward.cpp), each a kernel launch on one stream:
//   x = embed(token)                                 (the row is dequantized on the CPU and uploaded)
//   per layer: h = rmsnorm(x); q,k,v = Wq h (+bq), Wk h (+bk), Wv h (+bv); rope(q, k); cache k, v
//              x += Wo attention(q, cache); h = rmsnorm(x); x += Wdown (silu(Wgate h) * (Wup h))
//   logits = Wout rmsnorm(x)
// Weights are uploaded once, quantized as in the file; activations for the quantized types are
// quantized to Q8_K once per input vector and shared by the matrices that read it.
//
// Note [Decode graph]
// A token's ~15 launches per layer cost more on the host (~6 us each in the device VM) than the GPU
// needs for them, so after a first eager step the launches are captured once into a CUDA graph and
// replayed per token: the kernels read the position from device memory and attention is launched over
// chunks for the whole context, so the same graph is right at every position. Per token the
// host copies the embedding row and the position (pinned memory, on the stream) and launches the graph.
// (Attention's launch covers the whole context; chunks past the position return at once.)
// Two graphs: with and without the LM head (prompt tokens whose logits nobody reads skip it).
// REALIZAR_CUDA_GRAPHS=0 launches every kernel eagerly instead (for comparison).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "cuda/context.h"
#include "cuda/ops/gemv.h"
#include "cuda/ops/layer.h"
#include "realizar/model.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar {
namespace {

namespace cu = trueno::cuda;
using trueno::QuantType;

struct DeviceMatrix {
  QuantType type = QuantType::F32;
  cu::DeviceBuffer data;
  std::size_t rows = 0, cols = 0;
};

DeviceMatrix upload(const Matrix& m, const std::string& name) {
  if (!cu::gemv_supports(m.type))
    throw trueno::InvalidArgument(strcat("cuda: tensor '", name, "' is ", trueno::quant_info(m.type).name,
                                         ", which has no CUDA kernel yet (supported: q4_0, q8_0, q4_k, q5_k, q6_k, f16, bf16, f32)"));
  DeviceMatrix d{m.type, cu::DeviceBuffer(m.data.size()), m.rows, m.cols};
  d.data.upload(m.data.data(), m.data.size());
  return d;
}

cu::DeviceBuffer upload(const std::vector<float>& v) {
  cu::DeviceBuffer b(v.size() * sizeof(float));
  if (!v.empty()) b.upload(v.data(), v.size() * sizeof(float));
  return b;
}

struct DeviceLayer {
  cu::DeviceBuffer attn_norm, ffn_norm, bq, bk, bv;
  DeviceMatrix wq, wk, wv, wo, gate, up, down;
};

class CudaSequence final : public Sequence {
 public:
  CudaSequence(const Model& m, std::size_t n_ctx);
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = 0; }
  std::size_t kv_bytes() const override { return k_cache_.bytes() + v_cache_.bytes(); }
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override;
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override { return "cuda"; }

 private:
  const Model& m_;
  const Config& c_;
  cu::Context& ctx_;
  std::size_t n_ctx_, pos_ = 0, kv_row_;
  std::vector<DeviceLayer> layers_;
  DeviceMatrix output_;
  cu::DeviceBuffer output_norm_, rope_freqs_, k_cache_, v_cache_;
  cu::DeviceBuffer x_, xn_, q_, k_, v_, att_, gate_, up_, logits_dev_;
  std::optional<cu::Q8Activations> xq_embd_, xq_ff_;  // when n_embd / n_ff are multiples of 256
  cu::DeviceBuffer pos_dev_;                            // int: the position being computed
  std::optional<cu::AttentionScratch> attention_;
  cu::PinnedBuffer staging_;                            // [n_embd] floats, then the position
  std::vector<float> logits_;
  cu::RopeParams rope_{};
  bool use_graphs_;
  bool warmed_[2] = {false, false};  // an eager step has run (modules loaded) without / with logits
  cu::Graph graphs_[2];

  struct Product {
    const DeviceMatrix* w;
    const cu::DeviceBuffer* y;
  };
  // y_i = W_i x (y_i += W_i x with accumulate) for matrices reading the same x, x quantized to Q8_K once
  // when a type needs it; matrices of one type in a row share a launch (q, k, v; gate, up).
  // x_quantized: xq already holds Q8_K(x) (a fused kernel wrote it).
  void linear(std::initializer_list<Product> products, const cu::DeviceBuffer& x, std::optional<cu::Q8Activations>& xq,
              bool accumulate = false, bool x_quantized = false);
  void enqueue(bool logits);
  void step(std::int32_t token, float* logits_out);
};

bool graphs_enabled() {
  const char* e = std::getenv("REALIZAR_CUDA_GRAPHS");
  return e == nullptr || std::string_view(e) != "0";
}

CudaSequence::CudaSequence(const Model& m, std::size_t n_ctx)
    : m_(m),
      c_(m.config()),
      ctx_(cu::Context::get()),
      n_ctx_(n_ctx),
      kv_row_(std::size_t{c_.n_head_kv} * c_.head_dim),
      use_graphs_(graphs_enabled()) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
  if (n_ctx > static_cast<std::size_t>(cu::kMaxAttentionPositions))
    throw trueno::InvalidArgument(strcat("cuda: a context of ", n_ctx, " positions exceeds the ", cu::kMaxAttentionPositions,
                                         " the decode attention kernel supports yet"));
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const LayerWeights& w = m.layers[l];
    const std::string p = strcat("blk.", l, ".");
    layers_.push_back({upload(w.attn_norm), upload(w.ffn_norm), upload(w.bq), upload(w.bk), upload(w.bv),
                       upload(w.wq, p + "attn_q.weight"), upload(w.wk, p + "attn_k.weight"), upload(w.wv, p + "attn_v.weight"),
                       upload(w.wo, p + "attn_output.weight"), upload(w.gate, p + "ffn_gate.weight"),
                       upload(w.up, p + "ffn_up.weight"), upload(w.down, p + "ffn_down.weight")});
  }
  output_ = upload(m.output, "output.weight");
  output_norm_ = upload(m.output_norm);
  rope_freqs_ = upload(m.rope_freqs);
  const std::size_t kv = std::size_t{c_.n_layer} * n_ctx * kv_row_ * sizeof(std::uint16_t);
  k_cache_ = cu::DeviceBuffer(kv), v_cache_ = cu::DeviceBuffer(kv);
  const std::size_t d = c_.n_embd, qd = std::size_t{c_.n_head} * c_.head_dim;
  x_ = cu::DeviceBuffer(d * 4), xn_ = cu::DeviceBuffer(d * 4), q_ = cu::DeviceBuffer(qd * 4);
  k_ = cu::DeviceBuffer(kv_row_ * 4), v_ = cu::DeviceBuffer(kv_row_ * 4), att_ = cu::DeviceBuffer(qd * 4);
  gate_ = cu::DeviceBuffer(std::size_t{c_.n_ff} * 4), up_ = cu::DeviceBuffer(std::size_t{c_.n_ff} * 4);
  logits_dev_ = cu::DeviceBuffer(std::size_t{c_.n_vocab} * 4);
  if (d % 256 == 0 && qd == d) xq_embd_.emplace(d);
  if (c_.n_ff % 256 == 0) xq_ff_.emplace(c_.n_ff);
  pos_dev_ = cu::DeviceBuffer(sizeof(int));
  attention_.emplace(static_cast<int>(n_ctx), static_cast<int>(c_.n_head), static_cast<int>(c_.head_dim));
  staging_ = cu::PinnedBuffer(d * sizeof(float) + sizeof(int));
  rope_ = {static_cast<int>(c_.head_dim), static_cast<int>(c_.rope_dim),
           std::pow(c_.rope_base, -2.0f / static_cast<float>(c_.rope_dim)), m.rope_freqs.empty() ? 0 : rope_freqs_.ptr(),
           c_.rope_neox};
}

void CudaSequence::linear(std::initializer_list<Product> products, const cu::DeviceBuffer& x,
                          std::optional<cu::Q8Activations>& xq, bool accumulate, bool x_quantized) {
  bool quantized = x_quantized;
  std::vector<cu::GemvTarget> run;
  const DeviceMatrix* first = nullptr;
  const auto flush = [&] {
    if (run.empty()) return;
    const bool q8 = cu::gemv_takes_q8(first->type);
    if (q8 && !xq)
      throw trueno::ShapeError(strcat("cuda: a ", trueno::quant_info(first->type).name, " matrix with ", first->cols,
                                      " columns (not a multiple of 256)"));
    if (q8 && !quantized) cu::quantize_q8_k(ctx_, x.ptr(), *xq), quantized = true;
    cu::gemv_multi(ctx_, first->type, run, first->cols, x.ptr(), q8 ? &*xq : nullptr, first->type == QuantType::F16, accumulate);
    run.clear();
  };
  for (const Product& p : products) {
    if (!run.empty() && (p.w->type != first->type || p.w->cols != first->cols || run.size() == 3)) flush();
    if (run.empty()) first = p.w;
    run.push_back({p.w->data.ptr(), p.w->rows, p.y->ptr()});
  }
  flush();
}

void CudaSequence::enqueue(bool logits) {
  const std::size_t d = c_.n_embd;
  const int group = static_cast<int>(c_.n_head / c_.n_head_kv);
  // Fused steps where the shapes allow (Q8_K blocks of 256): rmsnorm + quantize, rope + cache append,
  // swiglu + quantize; the unfused kernels otherwise (e.g. stories260K's width 64).
  const bool fuse_embd = xq_embd_.has_value(), fuse_ff = xq_ff_.has_value();
  const auto norm = [&](const cu::DeviceBuffer& weight) {
    if (fuse_embd)
      cu::rmsnorm_quantize(ctx_, x_.ptr(), weight.ptr(), c_.rms_eps, xn_.ptr(), *xq_embd_);
    else
      cu::rmsnorm(ctx_, x_.ptr(), weight.ptr(), c_.rms_eps, xn_.ptr(), 1, d);
  };
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const DeviceLayer& w = layers_[l];
    norm(w.attn_norm);
    linear({{&w.wq, &q_}, {&w.wk, &k_}, {&w.wv, &v_}}, xn_, xq_embd_, false, fuse_embd);
    if (w.bq.bytes() != 0) cu::add_inplace(ctx_, q_.ptr(), w.bq.ptr(), w.bq.bytes() / 4);
    if (w.bk.bytes() != 0) cu::add_inplace(ctx_, k_.ptr(), w.bk.ptr(), w.bk.bytes() / 4);
    if (w.bv.bytes() != 0) cu::add_inplace(ctx_, v_.ptr(), w.bv.ptr(), w.bv.bytes() / 4);
    const std::size_t layer_off = l * n_ctx_ * kv_row_ * sizeof(std::uint16_t);
    cu::rope_append(ctx_, q_.ptr(), k_.ptr(), v_.ptr(), static_cast<int>(c_.n_head), static_cast<int>(c_.n_head_kv), pos_dev_.ptr(),
                    rope_, k_cache_.ptr() + layer_off, v_cache_.ptr() + layer_off);
    cu::attention_decode(ctx_, q_.ptr(), k_cache_.ptr() + layer_off, v_cache_.ptr() + layer_off, att_.ptr(), pos_dev_.ptr(),
                         *attention_, static_cast<int>(c_.n_head), static_cast<int>(c_.head_dim), group, static_cast<int>(kv_row_));
    linear({{&w.wo, &x_}}, att_, xq_embd_, /*accumulate=*/true);  // the residual: x += Wo att

    norm(w.ffn_norm);
    linear({{&w.gate, &gate_}, {&w.up, &up_}}, xn_, xq_embd_, false, fuse_embd);
    if (fuse_ff)
      cu::swiglu_quantize(ctx_, gate_.ptr(), up_.ptr(), *xq_ff_);
    else
      cu::swiglu(ctx_, gate_.ptr(), up_.ptr(), c_.n_ff);
    linear({{&w.down, &x_}}, gate_, xq_ff_, /*accumulate=*/true, fuse_ff);
  }
  if (logits) {
    norm(output_norm_);
    linear({{&output_, &logits_dev_}}, xn_, xq_embd_, false, fuse_embd);
  }
}

void CudaSequence::step(std::int32_t token, float* logits_out) {
  const Matrix& e = m_.token_embd;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols), d = c_.n_embd;
  ctx_.synchronize();  // the previous token's copies have read the staging buffer
  auto* row = static_cast<float*>(staging_.data());
  trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(token) * rb, rb), e.cols),
                     std::span(row, d));
  const int pos = static_cast<int>(pos_);
  std::memcpy(row + d, &pos, sizeof pos);
  const cu::Driver& drv = ctx_.driver();
  cu::check(drv.memcpy_htod_async(x_.ptr(), row, d * sizeof(float), ctx_.stream()), "cuMemcpyHtoDAsync(embedding)");
  cu::check(drv.memcpy_htod_async(pos_dev_.ptr(), row + d, sizeof pos, ctx_.stream()), "cuMemcpyHtoDAsync(position)");
  const bool want = logits_out != nullptr;
  if (use_graphs_ && warmed_[want]) {  // Note [Decode graph]
    cu::Graph& g = graphs_[want];
    if (!g.ready()) g.capture(ctx_, [&] { enqueue(want); });
    g.launch(ctx_);
  } else {
    enqueue(want);
    warmed_[want] = true;
  }
  if (want) {
    ctx_.synchronize();
    logits_dev_.download(logits_out, std::size_t{c_.n_vocab} * 4);
  }
  ++pos_;
}

void CudaSequence::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  const std::size_t T = tokens.size(), V = c_.n_vocab;
  if (T == 0) throw trueno::InvalidArgument("forward: no tokens");
  if (pos_ + T > n_ctx_)
    throw trueno::InvalidArgument(strcat("forward: ", pos_, " + ", T, " tokens exceed the context size ", n_ctx_));
  for (const auto id : tokens)
    if (id < 0 || static_cast<std::uint32_t>(id) >= c_.n_vocab)
      throw trueno::InvalidArgument(strcat("forward: token id ", id, " is outside the vocabulary [0, ", c_.n_vocab, ")"));
  logits_.resize((all_logits ? T : 1) * V);
  cu::Context::get().make_current();
  for (std::size_t t = 0; t < T; ++t) {
    float* out = all_logits ? logits_.data() + t * V : (t + 1 == T ? logits_.data() : nullptr);
    step(tokens[t], out);
  }
}

}  // namespace

std::unique_ptr<Sequence> make_cuda_sequence(const Model& m, std::size_t n_ctx) { return std::make_unique<CudaSequence>(m, n_ctx); }

}  // namespace realizar
