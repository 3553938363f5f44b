// The forward pass on a CUDA device for generated tokens, one at a time with the decode kernels
// (src/cuda/ops; prompts go in batches through prefill_cuda.cpp): the same steps as the CPU pass
// (forward.cpp), each a kernel launch on one stream:
//   x = embed(token)                                 (the row is dequantized on the CPU and uploaded)
//   per layer: h = rmsnorm(x); q,k,v = Wq h (+bq), Wk h (+bk), Wv h (+bv); rope(q, k); cache k, v
//              x += Wo attention(q, cache); h = rmsnorm(x); x += Wdown (silu(Wgate h) * (Wup h))
//   logits = Wout rmsnorm(x)
// Weights are uploaded once, quantized as in the file (Q8_0 and Q6_K rearranged for wide loads, same size:
// cu::WeightLayout, src/cuda/include/trueno/cuda/ops/gemv.h); activations for the quantized types are
// quantized to Q8_K once per input vector and shared by the matrices that read it.
//
// Note [Decode graph]
// A token's ~15 launches per layer cost more on the host (~6 us each in the device VM) than the GPU
// needs for them, so after a first eager step the launches are captured once into a CUDA graph and
// replayed per token: the kernels read the position from device memory, so one graph is right at every
// position of its bucket. Attention launches one block per 64-position chunk and head; chunks past the
// position return at once, but a launch over a 16K context would still schedule 256 chunks per head for a
// short sequence, so graphs are captured per bucket of positions (64, 128, 256, ... up to the context
// size), each launching only its bucket's chunks: the first token past a bucket captures the next one.
// Per token the host copies the embedding row and the position (pinned memory, on the stream) and launches
// the graph. Graphs with and without the LM head (prompt tokens whose logits nobody reads skip it); the
// LM head is followed by the argmax scan of Note [Sampling on the device] (sample_cuda.cpp).
// REALIZAR_CUDA_GRAPHS=0 launches every kernel eagerly instead (for comparison).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "trueno/cuda/ops/convert.h"
#include "trueno/cuda/ops/gemm.h"
#include "backends/cuda/cuda_sequence.h"
#include "trueno/log.h"
#include "model/step_checks.h"
#include "realizar/recorder.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar {
namespace cuda_forward {
namespace {

using trueno::QuantType;

DeviceMatrix upload(cu::Context& c, const Matrix& m, const std::string& name, bool keep_f16) {
  if (!cu::gemv_supports(m.type))
    throw trueno::InvalidArgument(strcat("cuda: tensor '", name, "' is ", trueno::quant_info(m.type).name,
                                         ", which has no CUDA kernel yet (supported: q4_0, q8_0, q4_k, q5_k, q6_k, f16, bf16, f32)"));
  DeviceMatrix d{m.type, cu::DeviceBuffer(c, m.data.size()), m.rows, m.cols, cu::preferred_layout(m.type, m.cols), {}, std::nullopt};
  if (d.layout == cu::WeightLayout::Split) {  // through a file-layout copy, freed once the split is done
    cu::DeviceBuffer file(c, m.data.size());
    file.upload(m.data.data(), m.data.size());
    cu::split_rows(c, m.type, file.ptr(), d.data.ptr(), m.rows, m.cols);
    c.synchronize();
  } else {
    d.data.upload(m.data.data(), m.data.size());
  }
  if (keep_f16 && m.type != QuantType::F32) {
    d.f16 = cu::DeviceBuffer(c, m.rows * m.cols * 2);
    cu::dequantize_f16(c, m.type, d.data.ptr(), m.rows, m.cols, d.f16.ptr(), nullptr, d.layout);
  }
  return d;
}

cu::DeviceBuffer upload(cu::Context& c, const std::vector<float>& v) {
  cu::DeviceBuffer b(c, v.size() * sizeof(float));
  if (!v.empty()) b.upload(v.data(), v.size() * sizeof(float));
  return b;
}

bool graphs_enabled() {
  const char* e = std::getenv("REALIZAR_CUDA_GRAPHS");
  return e == nullptr || std::string_view(e) != "0";
}

}  // namespace

// Note [Resident f16 weights]
// The GEMMs of prompt chunks and batched steps multiply f16 weights. Dequantizing them a layer ahead for
// every pass (Note [Dequantization ahead]) writes 13.5 GB for a 7B model each time: ~5 ms of a 14.5 ms
// batched step of 64 sequences, and a prompt pass's floor. With memory to spare (an H200 holds a 7B
// model's 4 GB of blocks and 13.5 GB of f16 many times over) the f16 copy is made once at load and kept
// beside the blocks: the fused decode kernels read the blocks, the GEMMs the copy, and the staging has
// nothing left to dequantize. Same dequantizer, same f16 values, so the same products as staged. auto
// keeps the copy when both take at most half of the free memory at load (the rest is for KV caches and
// activations); --gemm-weights resident|staged decides instead.
namespace {

bool keep_f16_copies(const Model& m, cu::Context& x, const CudaOptions& o) {
  if (o.decode_gemv == CudaOptions::DecodeGemv::CublasF16) return true;  // its decode multiplies them
  if (o.prefill == CudaOptions::Prefill::FP8 || o.gemm_weights == CudaOptions::GemmWeights::Staged) return false;
  if (o.gemm_weights == CudaOptions::GemmWeights::Resident) return true;
  std::size_t blocks = 0, f16 = 0;
  const auto count = [&](const Matrix& w) {
    if (w.type == QuantType::F32 || w.rows == 0) return;
    blocks += w.data.size(), f16 += w.rows * w.cols * 2;
  };
  for (const LayerWeights& w : m.layers)
    for (const Matrix* p : {&w.wq, &w.wk, &w.wv, &w.wo, &w.gate, &w.up, &w.down}) count(*p);
  count(m.output);
  std::size_t free = 0, total = 0;
  x.make_current();
  cu::check(x.driver().mem_get_info(&free, &total), "cuMemGetInfo");
  const bool resident = blocks + f16 <= free / 2;
  trueno::log(trueno::LogLevel::Info, strcat("cuda: GEMM weights ", resident ? "resident" : "staged", ": their f16 copy is ", f16 >> 20, " MiB, the blocks ",
                           blocks >> 20, " MiB, ", free >> 20, " MiB free (--gemm-weights; Note [Resident f16 weights])"));
  return resident;
}

}  // namespace

CudaWeights::CudaWeights(const Model& m, const trueno::Device& device, const CudaOptions& o)
    : m_(m), ctx(cu::Context::open(device.index)), options(o) {
  const Config& c = m.config();
  if (o.decode_attention == CudaOptions::DecodeAttention::Q8 && !cu::attention_q8_supports(static_cast<int>(c.head_dim)))
    throw trueno::InvalidArgument(strcat("--decode-attention q8: this model's heads have ", c.head_dim,
                                         " values; the 8-bit KV copy's attention takes heads of 64 or 128"));
  cu::Context& x = *ctx;
  const bool f16 = f16_copies = keep_f16_copies(m, x, o);
  for (std::size_t l = 0; l < c.n_layer; ++l) {
    const LayerWeights& w = m.layers[l];
    const std::string p = strcat("blk.", l, ".");
    layers.push_back({upload(x, w.attn_norm), upload(x, w.ffn_norm), upload(x, w.bq), upload(x, w.bk), upload(x, w.bv),
                      upload(x, w.wq, p + "attn_q.weight", f16), upload(x, w.wk, p + "attn_k.weight", f16),
                      upload(x, w.wv, p + "attn_v.weight", f16), upload(x, w.wo, p + "attn_output.weight", f16),
                      upload(x, w.gate, p + "ffn_gate.weight", f16), upload(x, w.up, p + "ffn_up.weight", f16),
                      upload(x, w.down, p + "ffn_down.weight", f16)});
  }
  output = upload(x, m.output, "output.weight", f16);
  if (o.prefill == CudaOptions::Prefill::FP8) to_fp8();
  output_norm = upload(x, m.output_norm);
  rope_freqs = upload(x, m.rope_freqs);
  rope = {static_cast<int>(c.head_dim), static_cast<int>(c.rope_dim), std::pow(c.rope_base, -2.0f / static_cast<float>(c.rope_dim)),
          m.rope_freqs.empty() ? 0 : rope_freqs.ptr(), c.rope_neox};
}

F16Staging& CudaWeights::staging() const {
  std::lock_guard lock(staging_mutex_);
  if (!staging_) staging_ = std::make_unique<F16Staging>(*this);
  return *staging_;
}

std::unique_ptr<Sequence> CudaWeights::new_sequence(std::size_t n_ctx) const {
  return std::make_unique<CudaSequence>(shared_from_this(), n_ctx);
}

CudaSequence::CudaSequence(std::shared_ptr<const CudaWeights> weights, std::size_t n_ctx)
    : w_(std::move(weights)),
      m_(w_->model()),
      c_(m_.config()),
      ctx_(*w_->ctx),
      options_(w_->options),
      n_ctx_(n_ctx),
      kv_row_(std::size_t{c_.n_head_kv} * c_.head_dim),
      layers_(w_->layers),
      output_(w_->output),
      output_norm_(w_->output_norm),
      rope_(w_->rope),
      use_graphs_(graphs_enabled()) {
  if (n_ctx == 0) throw trueno::InvalidArgument("session: context size must be at least 1");
  if (n_ctx > static_cast<std::size_t>(cu::kMaxAttentionPositions))
    throw trueno::InvalidArgument(strcat("cuda: a context of ", n_ctx, " positions exceeds the ", cu::kMaxAttentionPositions,
                                         " the decode attention covers"));
  const bool f16 = options_.decode_gemv == CudaOptions::DecodeGemv::CublasF16;
  cu::Context& x = ctx_;
  const std::size_t kv = std::size_t{c_.n_layer} * n_ctx * kv_row_ * sizeof(std::uint16_t);
  k_cache_ = cu::DeviceBuffer(x, kv), v_cache_ = cu::DeviceBuffer(x, kv);
  const std::size_t d = c_.n_embd, qd = std::size_t{c_.n_head} * c_.head_dim;
  x_ = cu::DeviceBuffer(x, d * 4), xn_ = cu::DeviceBuffer(x, d * 4), q_ = cu::DeviceBuffer(x, qd * 4);
  k_ = cu::DeviceBuffer(x, kv_row_ * 4), v_ = cu::DeviceBuffer(x, kv_row_ * 4), att_ = cu::DeviceBuffer(x, qd * 4);
  gate_ = cu::DeviceBuffer(x, std::size_t{c_.n_ff} * 4), up_ = cu::DeviceBuffer(x, std::size_t{c_.n_ff} * 4);
  logits_dev_ = cu::DeviceBuffer(x, std::size_t{c_.n_vocab} * 4);
  if (f16) x16_ = cu::DeviceBuffer(x, std::max({d, qd, std::size_t{c_.n_ff}}) * 2);
  if (d % 256 == 0 && qd == d) xq_embd_.emplace(x, d);
  if (c_.n_ff % 256 == 0) xq_ff_.emplace(x, c_.n_ff);
  pos_dev_ = cu::DeviceBuffer(x, sizeof(int));
  attention_.emplace(x, static_cast<int>(n_ctx), static_cast<int>(c_.n_head), static_cast<int>(c_.head_dim));
  if (options_.decode_attention == CudaOptions::DecodeAttention::Q8)
    kv_q8_.emplace(x, static_cast<int>(c_.n_layer), static_cast<int>(n_ctx), static_cast<int>(kv_row_));
  staging_ = cu::PinnedBuffer(x, d * sizeof(float) + sizeof(int));
  sample_.emplace(x, c_.n_vocab);
  scan_dev_ = cu::DeviceBuffer(x, sizeof(cu::ArgmaxResult));
  picked_dev_ = cu::DeviceBuffer(x, cu::top_k_bytes(cu::kMaxTopK));
  readback_ = cu::PinnedBuffer(x, sizeof(cu::ArgmaxResult) + cu::top_k_bytes(cu::kMaxTopK));
}

// Every matrix as scaled E4M3 (Note [FP8 prefill], prefill_cuda.cpp), through f16 (the dequantizers' output).
void CudaWeights::to_fp8() {
  cu::Context& ctx_ = *ctx;
  std::vector<DeviceMatrix*> all;
  const auto take = [&](DeviceMatrix* w) {
    if (w->rows % 16 == 0 && w->cols % 16 == 0) all.push_back(w);
  };
  for (DeviceLayer& l : layers)
    for (DeviceMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) take(w);
  take(&output);
  std::size_t most = 0;
  for (const DeviceMatrix* w : all) most = std::max(most, w->rows * w->cols);
  if (all.empty()) return;
  cu::DeviceBuffer scratch(ctx_, most * 2);
  for (DeviceMatrix* w : all) {
    const std::size_t n = w->rows * w->cols;
    w->fp8.emplace(ctx_, n);
    if (w->type == QuantType::F32) {
      cu::quantize_fp8_f32(ctx_, w->data.ptr(), n, *w->fp8);
    } else {
      cu::dequantize_f16(ctx_, w->type, w->data.ptr(), w->rows, w->cols, scratch.ptr(), nullptr, w->layout);
      cu::quantize_fp8_f16(ctx_, scratch.ptr(), n, *w->fp8);
    }
  }
  ctx_.synchronize();  // the scratch is freed on return
}

std::string CudaWeights::backend_name() const {
  std::string name = ctx->index() == 0 ? "cuda" : strcat("cuda:", ctx->index());
  if (options.decode_gemv == CudaOptions::DecodeGemv::CublasF16) name += "/cublas-f16";
  if (options.prefill == CudaOptions::Prefill::FP8) name += "/fp8-prefill";
  if (options.prefill == CudaOptions::Prefill::TokenByToken) name += "/token-prefill";
  if (options.decode_attention == CudaOptions::DecodeAttention::Q8) name += "/q8-attention";
  return name;
}

void CudaSequence::linear(std::initializer_list<Product> products, const cu::DeviceBuffer& x,
                          std::optional<cu::Q8Activations>& xq, bool accumulate, bool x_quantized) {
  if (options_.decode_gemv == CudaOptions::DecodeGemv::CublasF16) {  // the baseline: cuBLAS over f16 weights
    bool cast = false;
    for (const Product& p : products) {
      const bool f32 = p.w->type == QuantType::F32;
      if (!f32 && !cast) cu::cast_f16(ctx_, x.ptr(), x16_.ptr(), p.w->cols), cast = true;
      cu::gemm(ctx_, f32 ? cu::GemmOperand::F32 : cu::GemmOperand::F16, p.w->rows, 1, p.w->cols, f32 ? p.w->data.ptr() : p.w->f16.ptr(),
               f32 ? x.ptr() : x16_.ptr(), p.y->ptr(), accumulate ? 1.0f : 0.0f);
    }
    return;
  }
  bool quantized = x_quantized;
  if (mixed_launch(products) && xq) {  // Note [Q4_K and Q6_K in one launch]: q and k Q4_K, v Q6_K
    if (!quantized) cu::quantize_q8_k(ctx_, x.ptr(), *xq);
    const Product* p = products.begin();
    std::vector<cu::GemvTarget> q4;
    for (std::size_t i = 0; i + 1 < products.size(); ++i) q4.push_back({p[i].w->data.ptr(), p[i].w->rows, p[i].y->ptr()});
    const Product& last = p[products.size() - 1];
    cu::gemv_q4_k_q6_k(ctx_, q4, {last.w->data.ptr(), last.w->rows, last.y->ptr()}, last.w->cols, *xq, accumulate);
    return;
  }
  std::vector<cu::GemvTarget> run;
  const DeviceMatrix* first = nullptr;
  const auto flush = [&] {
    if (run.empty()) return;
    const bool q8 = cu::gemv_takes_q8(first->type);
    if (q8 && !xq)
      throw trueno::ShapeError(strcat("cuda: a ", trueno::quant_info(first->type).name, " matrix with ", first->cols,
                                      " columns (not a multiple of 256)"));
    if (q8 && !quantized) cu::quantize_q8_k(ctx_, x.ptr(), *xq), quantized = true;
    cu::gemv_multi(ctx_, first->type, run, first->cols, x.ptr(), q8 ? &*xq : nullptr, first->type == QuantType::F16, accumulate,
                   first->layout);
    run.clear();
  };
  for (const Product& p : products) {
    if (!run.empty() && (p.w->type != first->type || p.w->layout != first->layout || p.w->cols != first->cols || run.size() == 3))
      flush();
    if (run.empty()) first = p.w;
    run.push_back({p.w->data.ptr(), p.w->rows, p.y->ptr()});
  }
  flush();
}

bool CudaSequence::mixed_launch(std::initializer_list<Product> products) const {
  if (!cu::gemv_mixed_launches() || products.size() < 2 || products.size() > 3) return false;
  const Product* p = products.begin();
  const DeviceMatrix& last = *p[products.size() - 1].w;
  if (last.type != QuantType::Q6_K || last.layout != cu::WeightLayout::Split || last.cols % 256 != 0) return false;
  for (std::size_t i = 0; i + 1 < products.size(); ++i)
    if (p[i].w->type != QuantType::Q4_K || p[i].w->cols != last.cols) return false;
  return true;
}

std::size_t CudaSequence::bucket_for(std::size_t pos) const {
  std::size_t b = 64;
  while (b <= pos) b *= 2;
  return std::min(b, n_ctx_);
}

void CudaSequence::tap(int layer, std::string_view tensor, const cu::DeviceBuffer& b, std::size_t n) {
  if (!recording_) return;
  ctx_.synchronize();
  tapped_.resize(n);
  b.download(tapped_.data(), n * sizeof(float));
  if (tensor == "ffn_inp") ffn_inp_ = tapped_;
  if (tensor == "l_out") {  // the down product accumulated into x: ffn_out = l_out - ffn_inp
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = tapped_[i] - ffn_inp_[i];
    recorder_->record(layer, "ffn_out", out);
  }
  recorder_->record(layer, tensor, tapped_);
}

void CudaSequence::enqueue(bool logits, std::size_t bucket) {
  const std::size_t d = c_.n_embd;
  // Fused steps where the shapes allow (Q8_K blocks of 256): rmsnorm + quantize, rope + cache append,
  // swiglu + quantize; the unfused kernels otherwise (e.g. stories260K's width 64).
  const bool fuse_embd = xq_embd_.has_value(), fuse_ff = xq_ff_.has_value();
  const auto norm = [&](const cu::DeviceBuffer& weight) {
    if (fuse_embd)
      cu::rmsnorm_quantize(ctx_, x_.ptr(), weight.ptr(), c_.rms_eps, xn_.ptr(), *xq_embd_);
    else
      cu::rmsnorm(ctx_, x_.ptr(), weight.ptr(), c_.rms_eps, xn_.ptr(), 1, d);
  };
  const std::size_t qd = std::size_t{c_.n_head} * c_.head_dim;
  const bool fuse_rope = !recording_ && cu::rope_attention_fusable(*attention_, static_cast<int>(bucket), rope_.head_dim, rope_.rope_dim);
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const DeviceLayer& w = layers_[l];
    const int li = static_cast<int>(l);
    norm(w.attn_norm);
    tap(li, "attn_norm", xn_, d);
    linear({{&w.wq, &q_}, {&w.wk, &k_}, {&w.wv, &v_}}, xn_, xq_embd_, false, fuse_embd);
    if (w.bq.bytes() != 0) cu::add_inplace(ctx_, q_.ptr(), w.bq.ptr(), w.bq.bytes() / 4);
    if (w.bk.bytes() != 0) cu::add_inplace(ctx_, k_.ptr(), w.bk.ptr(), w.bk.bytes() / 4);
    if (w.bv.bytes() != 0) cu::add_inplace(ctx_, v_.ptr(), w.bv.ptr(), w.bv.bytes() / 4);
    tap(li, "q", q_, qd), tap(li, "k", k_, kv_row_), tap(li, "v", v_, kv_row_);
    const std::size_t layer_off = l * n_ctx_ * kv_row_ * sizeof(std::uint16_t);
    if (fuse_rope)  // Note [Rope inside the attention]: one launch, the same bits; q_ and k_ stay unrotated
      cu::rope_attention_one_block(ctx_, q_.ptr(), k_.ptr(), v_.ptr(), static_cast<int>(c_.n_head), static_cast<int>(c_.n_head_kv),
                                   pos_dev_.ptr(), rope_, k_cache_.ptr() + layer_off, v_cache_.ptr() + layer_off, att_.ptr(), *attention_,
                                   static_cast<int>(bucket));
    else
      rope_and_attend(li, layer_off, bucket);
    tap(li, "attn_out", att_, qd);
    linear({{&w.wo, &x_}}, att_, xq_embd_, /*accumulate=*/true);  // the residual: x += Wo att
    tap(li, "ffn_inp", x_, d);

    norm(w.ffn_norm);
    tap(li, "ffn_norm", xn_, d);
    linear({{&w.gate, &gate_}, {&w.up, &up_}}, xn_, xq_embd_, false, fuse_embd);
    if (fuse_ff)
      cu::swiglu_quantize(ctx_, gate_.ptr(), up_.ptr(), *xq_ff_);
    else
      cu::swiglu(ctx_, gate_.ptr(), up_.ptr(), c_.n_ff);
    tap(li, "ffn_act", gate_, c_.n_ff);
    linear({{&w.down, &x_}}, gate_, xq_ff_, /*accumulate=*/true, fuse_ff);
    tap(li, "l_out", x_, d);
  }
  if (logits) {
    norm(output_norm_);
    tap(kNoLayer, "output_norm", xn_, d);
    linear({{&output_, &logits_dev_}}, xn_, xq_embd_, false, fuse_embd);
    tap(kNoLayer, "logits", logits_dev_, c_.n_vocab);
    cu::argmax(ctx_, logits_dev_.ptr(), c_.n_vocab, *sample_, scan_dev_.ptr());
  }
}

void CudaSequence::rope_and_attend(int li, std::size_t layer_off, std::size_t bucket) {
  const int group = static_cast<int>(c_.n_head / c_.n_head_kv), n_head = static_cast<int>(c_.n_head), n_kv = static_cast<int>(c_.n_head_kv);
  const bool q8 = reads_kv_copy(bucket);  // Note [8-bit KV copy]: this position's k and v to the copy too, then attention over it
  if (q8 && cu::rope_append_q8_fusable(rope_.head_dim, rope_.rope_dim)) {  // Note [Rope and the 8-bit copy in one launch]
    cu::rope_append_q8(ctx_, q_.ptr(), k_.ptr(), v_.ptr(), n_head, n_kv, pos_dev_.ptr(), rope_, k_cache_.ptr() + layer_off,
                       v_cache_.ptr() + layer_off, *kv_q8_, li);
  } else {
    cu::rope_append(ctx_, q_.ptr(), k_.ptr(), v_.ptr(), n_head, n_kv, pos_dev_.ptr(), rope_, k_cache_.ptr() + layer_off,
                    v_cache_.ptr() + layer_off);
    if (q8) cu::kv_quantize_q8_at(ctx_, k_cache_.ptr(), v_cache_.ptr(), *kv_q8_, li, pos_dev_.ptr());
  }
  tap(li, "q_rope", q_, std::size_t{c_.n_head} * c_.head_dim), tap(li, "k_rope", k_, kv_row_);  // both rotate q and k in place
  if (q8) {
    cu::attention_decode_q8(ctx_, q_.ptr(), *kv_q8_, li, att_.ptr(), pos_dev_.ptr(), *attention_, static_cast<int>(c_.n_head),
                            static_cast<int>(c_.head_dim), group, static_cast<int>(bucket));
    return;
  }
  cu::attention_decode(ctx_, q_.ptr(), k_cache_.ptr() + layer_off, v_cache_.ptr() + layer_off, att_.ptr(), pos_dev_.ptr(), *attention_,
                       static_cast<int>(c_.n_head), static_cast<int>(c_.head_dim), group, static_cast<int>(kv_row_), static_cast<int>(bucket));
}

void CudaSequence::step(std::int32_t token, Logits logits, float* host_row) {
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
  const bool want = logits != Logits::None;
  if (recording_) recorder_->record(kNoLayer, "token_embd", std::span<const float>(row, d));
  const std::size_t bucket = bucket_for(pos_);
  if (reads_kv_copy(bucket)) update_kv_copy();  // the positions written since the copy's last step
  if (use_graphs_ && warmed_[want] && !recording_) {  // Note [Decode graph]
    cu::Graph& g = graphs_[{want, bucket}];
    if (!g.ready()) g.capture(ctx_, [&] { enqueue(want, bucket); });
    g.launch(ctx_);
  } else {
    enqueue(want, bucket);
    warmed_[want] = true;
  }
  if (reads_kv_copy(bucket)) kv_q8_valid_ = pos_ + 1;
  if (want) finish_logits(logits == Logits::Host ? host_row : nullptr);
  ++pos_;
}

bool CudaSequence::reads_kv_copy(std::size_t bucket) const {
  return kv_q8_.has_value() && !cu::attention_one_block(*attention_, static_cast<int>(bucket));
}

void CudaSequence::update_kv_copy() {
  if (kv_q8_valid_ >= pos_) return;
  cu::kv_quantize_q8(ctx_, k_cache_.ptr(), v_cache_.ptr(), *kv_q8_, static_cast<int>(kv_q8_valid_), static_cast<int>(pos_ - kv_q8_valid_));
  kv_q8_valid_ = pos_;
  ctx_.synchronize();  // Note [The copy's rows before the wait]: the split attention reads these rows before it waits
}

void CudaSequence::finish_logits(float* host_row) {
  const cu::Driver& drv = ctx_.driver();
  cu::check(drv.memcpy_dtoh_async(readback_.data(), scan_dev_.ptr(), sizeof(cu::ArgmaxResult), ctx_.stream()),
            "cuMemcpyDtoHAsync(logits scan)");
  if (host_row != nullptr)
    cu::check(drv.memcpy_dtoh_async(host_row, logits_dev_.ptr(), std::size_t{c_.n_vocab} * sizeof(float), ctx_.stream()),
              "cuMemcpyDtoHAsync(logits)");
  ctx_.synchronize();  // also where a fault of the step surfaces: in forward, as the CPU fallback expects
  std::memcpy(&scan_, readback_.data(), sizeof scan_);
}

void CudaSequence::forward(std::span<const std::int32_t> tokens, bool all_logits) {
  const std::size_t T = tokens.size(), V = c_.n_vocab;
  check_forward(c_, pos_, n_ctx_, tokens);
  device_row_ = host_stale_ = false;  // until this call's logits are in
  logits_.resize((all_logits ? T : 1) * V);
  ctx_.make_current();
  if (T > 1 && options_.prefill != CudaOptions::Prefill::TokenByToken && prefill_supported() && recorder_ == nullptr) {
    prefill(tokens, all_logits, logits_.data());
    if (reads_kv_copy(bucket_for(pos_))) {  // the next decode step reads the copy: the prompt's share now,
      update_kv_copy();                      // finished here so that it is the prompt's time, not the next step's
      ctx_.synchronize();
    }
  } else {
    for (std::size_t t = 0; t < T; ++t) {
      const Logits logits = all_logits ? Logits::Host : t + 1 == T ? Logits::Device : Logits::None;
      recording_ = recorder_ != nullptr && t + 1 == T;  // Note [Intermediates]: the last token, eagerly
      step(tokens[t], logits, logits_.data() + (all_logits ? t * V : 0));
    }
    recording_ = false;
  }
  device_row_ = host_stale_ = !all_logits;  // Note [Sampling on the device]
}

std::span<const float> CudaSequence::logits() const {
  if (host_stale_) {  // Note [Sampling on the device]: the row is copied on first use
    logits_dev_.download(logits_.data(), logits_.size() * sizeof(float));
    host_stale_ = false;
  }
  return logits_;
}

bool CudaSequence::logits_finite() const { return device_row_ ? scan_.non_finite == 0 : Sequence::logits_finite(); }

}  // namespace cuda_forward

// Note [Warm at load]
// The first prompt after a load paid the context's one-time work inside its own time: each module's
// NVRTC compilation (or cubin cache read), cuBLAS's handle and first plans, the f16 staging's buffers
// (issue 15: 212 against 1,385 tok/s on a 47-token prompt; the server's first request waited 3.1 s). A
// throwaway sequence of 64 positions runs a 2-token prompt and one decode step at load instead, so none
// of that lands in a timed or served request; what it took is logged (TRUENO_LOG=info).
std::shared_ptr<DeviceWeights> upload_cuda_weights(const Model& m, const trueno::Device& device, const CudaOptions& options) {
  auto weights = std::make_shared<cuda_forward::CudaWeights>(m, device, options);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const auto seq = weights->new_sequence(64);
    const std::int32_t prompt[2] = {0, 1 % static_cast<std::int32_t>(m.config().n_vocab)}, next = 0;
    seq->forward(prompt);
    seq->forward(std::span(&next, 1));
    weights->ctx->synchronize();
  } catch (const std::exception& e) {  // the first real step meets the same error where it is handled (the gate, a fallback)
    trueno::log(trueno::LogLevel::Warn, strcat("cuda: warming at load failed: ", e.what()));
    return weights;
  }
  trueno::log(trueno::LogLevel::Info, strcat("cuda: warmed at load (modules, cuBLAS, staging) in ",
                                             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), " ms"));
  return weights;
}

std::string cuda_identity(const trueno::Device& device, const CudaOptions& options) {
  return strcat(trueno::cuda::status(device.index).text, "\n", trueno::cuda::kernels_identity(), "\ndecode ", static_cast<int>(options.decode_gemv), " prefill ",
                static_cast<int>(options.prefill), " attention ", static_cast<int>(options.decode_attention));
}

}  // namespace realizar
