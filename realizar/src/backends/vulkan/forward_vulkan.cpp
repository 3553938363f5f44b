// The forward pass on a Vulkan device, one token at a time with the Vulkan decode shaders (src/vulkan):
// the same steps as the CPU pass (forward.cpp), each a dispatch in one command buffer:
//   x = embed(token)                                 (the row is dequantized on the CPU)
//   per layer: h = rmsnorm(x); q,k,v = Wq h (+bq), Wk h (+bk), Wv h (+bv); rope(q, k); cache k, v
//              x += Wo attention(q, cache); h = rmsnorm(x); x += Wdown (silu(Wgate h) * (Wup h))
//   logits = Wout rmsnorm(x)
// Weights are uploaded once, quantized as in the file; the shaders multiply f32 activations by them.
//
// Note [Vulkan decode recording]
// A token's ~16 dispatches per layer are recorded once into a command buffer and resubmitted per token
// (vk::Recorder::seal/replay, as the CUDA path replays a graph): the shaders read the position from a
// buffer, and the recording starts by copying the embedding row and the position from a host-visible
// buffer and ends by copying the logits back, so a token costs one submit and one wait. Attention
// dispatches only the chunks of its bucket of positions (64, 128, ... up to the context), so a step is
// recorded per bucket (and with or without the LM head); the first token past a bucket records the next.
//
// Note [Split matrices]
// A storage buffer binds at most maxStorageBufferRange bytes (2 or 4 GiB on many drivers; a 7B model's
// largest tensors fit, a 70B's or a large vocabulary's output matrix may not), so a matrix is uploaded as
// slices of whole rows that each fit. A split product runs per slice into a scratch vector and copies it
// to its rows of the output (added when accumulating). TRUENO_VULKAN_MAX_BUFFER lowers the limit for tests.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/vulkan/vulkan_sequence.h"
#include "model/step_checks.h"
#include "realizar/recorder.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar {
namespace vulkan_forward {
namespace {

using trueno::QuantType;

DeviceMatrix upload(vk::Context& c, const Matrix& m, const std::string& name) {
  if (!vk::gemv_supports(m.type))
    throw trueno::InvalidArgument(strcat("vulkan: tensor '", name, "' is ", trueno::quant_info(m.type).name,
                                         ", which has no Vulkan shader yet"));
  const std::size_t row_bytes = trueno::quant_row_bytes(m.type, m.cols);
  const std::size_t per_part = static_cast<std::size_t>(c.max_buffer_bytes() / row_bytes);
  if (per_part == 0)
    throw trueno::InvalidArgument(strcat("vulkan: one row of tensor '", name, "' (", row_bytes, " bytes) exceeds vulkan:", c.index(),
                                         "'s storage buffer limit of ", c.max_buffer_bytes(), " bytes"));
  DeviceMatrix d{m.type, m.rows, m.cols, {}};
  for (std::size_t r0 = 0; r0 < m.rows; r0 += per_part) {
    const std::size_t rows = std::min(per_part, m.rows - r0);
    vk::Buffer b(c, rows * row_bytes);
    b.upload(m.data.data() + r0 * row_bytes, rows * row_bytes);
    d.parts.push_back({std::move(b), r0, rows});
  }
  return d;
}

vk::Buffer upload(vk::Context& c, const std::vector<float>& v) {
  if (v.empty()) return {};
  vk::Buffer b(c, v.size() * sizeof(float));
  b.upload(v.data(), v.size() * sizeof(float));
  return b;
}

}  // namespace

VulkanWeights::VulkanWeights(const Model& m, const trueno::Device& device) : m_(m), ctx(vk::Context::open(device.index)) {
  const Config& c = m.config();
  vk::Context& x = *ctx;
  for (std::size_t l = 0; l < c.n_layer; ++l) {
    const LayerWeights& w = m.layers[l];
    const std::string p = strcat("blk.", l, ".");
    layers.push_back({upload(x, w.attn_norm), upload(x, w.ffn_norm), upload(x, w.bq), upload(x, w.bk), upload(x, w.bv),
                      upload(x, w.wq, p + "attn_q.weight"), upload(x, w.wk, p + "attn_k.weight"), upload(x, w.wv, p + "attn_v.weight"),
                      upload(x, w.wo, p + "attn_output.weight"), upload(x, w.gate, p + "ffn_gate.weight"),
                      upload(x, w.up, p + "ffn_up.weight"), upload(x, w.down, p + "ffn_down.weight")});
  }
  output = upload(x, m.output, "output.weight");
  output_norm = upload(x, m.output_norm);
  rope_freqs = upload(x, m.rope_freqs);
  theta_scale = std::pow(c.rope_base, -2.0f / static_cast<float>(c.rope_dim));
  const auto note = [&](const DeviceMatrix& d) {
    if (d.parts.size() > 1) most_split_rows = std::max(most_split_rows, d.rows);
    for (const auto& p : d.parts) largest_part_rows = std::max(largest_part_rows, p.rows);
  };
  for (const DeviceLayer& l : layers)
    for (const DeviceMatrix* d : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) note(*d);
  note(output);
  const auto gemm_ok = [&](const DeviceMatrix& d) { return vk::gemm_supports(d.type, d.cols); };
  for (const DeviceLayer& l : layers)
    for (const DeviceMatrix* d : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) this->gemm_ok = this->gemm_ok && gemm_ok(*d);
  this->gemm_ok = this->gemm_ok && gemm_ok(output);
}

std::unique_ptr<Sequence> VulkanWeights::new_sequence(std::size_t n_ctx) const {
  return std::make_unique<VulkanSequence>(shared_from_this(), n_ctx);
}

std::unique_ptr<Batch> VulkanWeights::new_batch() const { return std::make_unique<VulkanBatch>(shared_from_this()); }

std::string VulkanWeights::backend_name() const { return ctx->index() == 0 ? "vulkan" : strcat("vulkan:", ctx->index()); }

namespace {
std::size_t checked_ctx(std::size_t n_ctx) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
  return n_ctx;
}
}  // namespace

VulkanSequence::VulkanSequence(std::shared_ptr<const VulkanWeights> weights, std::size_t n_ctx)
    : w_(std::move(weights)),
      m_(w_->model()),
      c_(m_.config()),
      ctx_(*w_->ctx),
      n_ctx_(checked_ctx(n_ctx)),
      kv_row_(std::size_t{c_.n_head_kv} * c_.head_dim),
      rows_(std::min(w_->gemm_ok ? kMaxPrefillRows : vk::kMaxGemvRows, n_ctx)),
      logits_offset_((rows_ * c_.n_embd * 4 + 4 + 255) / 256 * 256),
      attention_(ctx_, n_ctx, c_.n_head, c_.head_dim, std::min(kAttentionRows, rows_)) {
  vk::Context& x = ctx_;
  const std::size_t kv = n_ctx * kv_row_ * sizeof(std::uint16_t), R = rows_;
  for (std::size_t l = 0; l < c_.n_layer; ++l) k_cache_.emplace_back(x, kv), v_cache_.emplace_back(x, kv);
  const std::size_t d = c_.n_embd, qd = std::size_t{c_.n_head} * c_.head_dim;
  x_ = vk::Buffer(x, R * d * 4), xn_ = vk::Buffer(x, R * d * 4), q_ = vk::Buffer(x, R * qd * 4), att_ = vk::Buffer(x, R * qd * 4);
  k_ = vk::Buffer(x, R * kv_row_ * 4), v_ = vk::Buffer(x, R * kv_row_ * 4), x_last_ = vk::Buffer(x, d * 4);
  gate_ = vk::Buffer(x, R * c_.n_ff * 4), up_ = vk::Buffer(x, R * c_.n_ff * 4);
  logits_dev_ = vk::Buffer(x, R * c_.n_vocab * 4);
  pos_dev_ = vk::Buffer(x, 4);
  if (w_->most_split_rows > 0) part_y_ = vk::Buffer(x, R * w_->largest_part_rows * 4), split_y_ = vk::Buffer(x, R * w_->most_split_rows * 4);
  io_ = vk::Buffer::transfer(x, logits_offset_ + R * c_.n_vocab * 4);
}

std::size_t VulkanSequence::kv_bytes() const { return 2 * c_.n_layer * n_ctx_ * kv_row_ * sizeof(std::uint16_t); }

std::size_t VulkanSequence::bucket_for(std::size_t pos) const {
  std::size_t b = 64;
  while (b <= pos) b *= 2;
  return std::min(b, n_ctx_);
}

void VulkanSequence::linear(vk::Recorder& r, const DeviceMatrix& w, const vk::Buffer& x, vk::Buffer& y, std::size_t T, bool accumulate) {
  const auto product = [&](const vk::Buffer& data, std::size_t rows, vk::Buffer& out, bool acc) {
    if (T > vk::kMaxGemvRows)  // Note [Vulkan prefill GEMM]
      vk::gemm(r, w.type, data, rows, w.cols, x, T, out, acc);
    else
      vk::gemv(r, w.type, data, rows, w.cols, x, T, out, acc);
  };
  if (w.parts.size() == 1) {
    product(w.parts[0].data, w.rows, y, accumulate);
    return;
  }
  vk::Buffer& target = accumulate ? split_y_ : y;  // Note [Split matrices]
  for (const DeviceMatrix::Part& p : w.parts) {
    product(p.data, p.rows, part_y_, false);
    for (std::size_t t = 0; t < T; ++t) r.copy(part_y_.handle(), target.handle(), p.rows * 4, t * p.rows * 4, (t * w.rows + p.row0) * 4);
  }
  if (accumulate) vk::add_inplace(r, y, split_y_, T * w.rows);
}

void VulkanSequence::tap(vk::Recorder& r, int layer, std::string_view tensor, const vk::Buffer& b, std::size_t n) {
  if (!tapping_) return;
  r.submit();
  tapped_.resize(n);
  b.download(tapped_.data(), n * sizeof(float));  // a tapped step has one row
  if (tensor == "ffn_inp") ffn_inp_ = tapped_;
  if (tensor == "l_out") {  // the down product accumulated into x: ffn_out = l_out - ffn_inp
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = tapped_[i] - ffn_inp_[i];
    recorder_->record(layer, "ffn_out", out);
  }
  recorder_->record(layer, tensor, tapped_);
}

// Independent dispatches (products of one input into different outputs, their bias adds, rope of q and
// of k) share one barrier; a split matrix's copies or a tap need barriers, so those run one by one.
template <class F>
void VulkanSequence::concurrent(vk::Recorder& r, F&& f) {
  const bool split = w_->most_split_rows > 0;
  if (!split && !tapping_) r.begin_concurrent();
  f();
  r.end_concurrent();
}

void VulkanSequence::record(vk::Recorder& r, std::size_t T, Logits logits, std::size_t bucket) {
  const std::size_t d = c_.n_embd, qd = std::size_t{c_.n_head} * c_.head_dim, V = c_.n_vocab;
  const vk::Buffer* freqs = w_->rope_freqs.handle() != VK_NULL_HANDLE ? &w_->rope_freqs : nullptr;
  const vk::RopeParams rope{static_cast<int>(c_.head_dim), static_cast<int>(c_.rope_dim), w_->theta_scale, freqs, c_.rope_neox};
  r.copy(io_.handle(), x_.handle(), T * d * 4);
  r.copy(io_.handle(), pos_dev_.handle(), 4, rows_ * d * 4, 0);
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const DeviceLayer& w = w_->layers[l];
    const int li = static_cast<int>(l);
    vk::rmsnorm(r, x_, w.attn_norm, c_.rms_eps, xn_, T, d);
    tap(r, li, "attn_norm", xn_, d);
    concurrent(r, [&] { linear(r, w.wq, xn_, q_, T), linear(r, w.wk, xn_, k_, T), linear(r, w.wv, xn_, v_, T); });
    concurrent(r, [&] {
      if (w.bq.bytes() != 0) vk::add_bias(r, q_, w.bq, T, w.bq.bytes() / 4);
      if (w.bk.bytes() != 0) vk::add_bias(r, k_, w.bk, T, w.bk.bytes() / 4);
      if (w.bv.bytes() != 0) vk::add_bias(r, v_, w.bv, T, w.bv.bytes() / 4);
    });
    tap(r, li, "q", q_, qd), tap(r, li, "k", k_, kv_row_), tap(r, li, "v", v_, kv_row_);
    concurrent(r, [&] {
      vk::rope(r, q_, static_cast<int>(c_.n_head), pos_dev_, rope, T);
      vk::rope(r, k_, static_cast<int>(c_.n_head_kv), pos_dev_, rope, T);
    });
    tap(r, li, "q_rope", q_, qd), tap(r, li, "k_rope", k_, kv_row_);
    vk::kv_append(r, k_, v_, k_cache_[l], v_cache_[l], pos_dev_, kv_row_, T);
    for (std::size_t r0 = 0; r0 < T; r0 += attention_.rows)  // a long prompt's rows through the scratch in turn
      vk::attention_decode(r, q_, k_cache_[l], v_cache_[l], pos_dev_, attention_, att_, c_.n_head / c_.n_head_kv, kv_row_, bucket,
                           std::min(attention_.rows, T - r0), r0);
    tap(r, li, "attn_out", att_, qd);
    linear(r, w.wo, att_, x_, T, /*accumulate=*/true);  // the residual: x += Wo att
    tap(r, li, "ffn_inp", x_, d);
    vk::rmsnorm(r, x_, w.ffn_norm, c_.rms_eps, xn_, T, d);
    tap(r, li, "ffn_norm", xn_, d);
    concurrent(r, [&] { linear(r, w.gate, xn_, gate_, T), linear(r, w.up, xn_, up_, T); });
    vk::swiglu(r, gate_, up_, T * c_.n_ff);
    tap(r, li, "ffn_act", gate_, c_.n_ff);
    linear(r, w.down, gate_, x_, T, /*accumulate=*/true);
    tap(r, li, "l_out", x_, d);
  }
  if (logits == Logits::None) return;
  const std::size_t n = logits == Logits::All ? T : 1;
  const vk::Buffer* h = &x_;
  if (logits == Logits::Last && T > 1) {  // only the last row's
    r.copy(x_.handle(), x_last_.handle(), d * 4, (T - 1) * d * 4, 0);
    h = &x_last_;
  }
  vk::rmsnorm(r, *h, w_->output_norm, c_.rms_eps, xn_, n, d);
  tap(r, kNoLayer, "output_norm", xn_, d);
  linear(r, w_->output, xn_, logits_dev_, n);
  tap(r, kNoLayer, "logits", logits_dev_, V);
  r.copy(logits_dev_.handle(), io_.handle(), n * V * 4, 0, logits_offset_);
}

// Note [Vulkan decode recording]: one recording per (rows, logits, bucket), replayed.
void VulkanSequence::run_rows(std::span<const std::int32_t> tokens, Logits logits, float* logits_out) {
  const std::size_t T = tokens.size(), d = c_.n_embd, V = c_.n_vocab;
  const Matrix& e = m_.token_embd;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols);
  auto* rows = static_cast<float*>(io_.data());
  for (std::size_t t = 0; t < T; ++t)
    trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(tokens[t]) * rb, rb), e.cols),
                       std::span(rows + t * d, d));
  const int pos = static_cast<int>(pos_);
  std::memcpy(rows + rows_ * d, &pos, sizeof pos);
  const std::size_t bucket = bucket_for(pos_ + T - 1);
  if (tapping_) {
    recorder_->record(kNoLayer, "token_embd", std::span<const float>(rows, d));
    vk::Recorder r(ctx_);
    record(r, T, logits, bucket);
    r.submit();
  } else if (T > vk::kMaxGemvRows) {  // a long prompt's chunk: recorded for this call only
    vk::Recorder r(ctx_);
    record(r, T, logits, bucket);
    r.submit();
  } else {
    std::unique_ptr<vk::Recorder>& r = steps_[{T, static_cast<int>(logits), bucket}];
    if (!r) {
      r = std::make_unique<vk::Recorder>(ctx_);
      record(*r, T, logits, bucket);
      r->seal();
    }
    r->replay();
  }
  if (logits != Logits::None)
    std::memcpy(logits_out, static_cast<const char*>(io_.data()) + logits_offset_, (logits == Logits::All ? T : 1) * V * 4);
  pos_ += T;
}

// A prompt goes through in chunks of up to rows_ tokens (GEMM products, or GEMV ones of up to 8 rows that
// share each weight read); the recorder's tap step runs the last token alone.
void VulkanSequence::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  const std::size_t T = tokens.size(), V = c_.n_vocab;
  check_forward(c_, pos_, n_ctx_, tokens);
  logits_.resize((all_logits ? T : 1) * V);
  for (std::size_t t = 0; t < T;) {
    std::size_t n = std::min(rows_, T - t);
    if (recorder_ != nullptr && t + n == T && n > 1) --n;  // Note [Intermediates]: the last token alone, eagerly
    const bool last = t + n == T;
    tapping_ = recorder_ != nullptr && last;
    const Logits mode = all_logits ? Logits::All : last ? Logits::Last : Logits::None;
    try {
      run_rows(tokens.subspan(t, n), mode, all_logits ? logits_.data() + t * V : logits_.data());
    } catch (...) {
      tapping_ = false;
      throw;
    }
    t += n;
  }
  tapping_ = false;
}

void VulkanBatch::step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) {
  // everything checked before any sequence advances
  const auto s = checked_batch<VulkanSequence>(w_->model().config(), seqs, tokens,
                                               [&](const VulkanSequence& q) { return q.w_ == w_; }, "these Vulkan weights");
  for (std::size_t i = 0; i < s.size(); ++i) s[i]->forward(tokens.subspan(i, 1), false);
}

}  // namespace vulkan_forward

std::shared_ptr<DeviceWeights> upload_vulkan_weights(const Model& m, const trueno::Device& device, const CudaOptions&) {
  return std::make_shared<vulkan_forward::VulkanWeights>(m, device);
}

std::string vulkan_identity(const trueno::Device& device, const CudaOptions&) {
  return strcat(trueno::vulkan::status(device.index).text, "\n", trueno::vulkan::shaders_identity());
}

}  // namespace realizar
