// The CUDA batched step (Note [CUDA batched step], cuda_sequence.h).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_sequence.h"
#include "model/step_checks.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar::cuda_forward {

std::unique_ptr<Batch> CudaWeights::new_batch() const { return std::make_unique<CudaBatch>(shared_from_this()); }

std::size_t CudaBatch::min_gemm_batch(const CudaWeights& w) {
  static const long forced = [] {
    const char* e = std::getenv("REALIZAR_CUDA_GEMM_BATCH");
    return e != nullptr ? std::strtol(e, nullptr, 10) : 0L;
  }();
  if (forced > 0) return static_cast<std::size_t>(forced);
  if (w.options.decode_gemv == CudaOptions::DecodeGemv::CublasF16) return kMinGemmBatchF16;
  return w.f16_copies ? kMinGemmBatchResident : kMinGemmBatch;
}

CudaBatch::CudaBatch(std::shared_ptr<const CudaWeights> weights) : w_(std::move(weights)), ctx_(*w_->ctx) {}

void CudaBatch::reserve(std::size_t B, std::size_t max_ctx) {
  if (B <= capacity_ && max_ctx <= max_ctx_) return;
  const Config& c = w_->model().config();
  capacity_ = std::max(B, capacity_), max_ctx_ = std::max(max_ctx, max_ctx_);
  reserve_products(*w_, capacity_, /*all_logits=*/true, pre_);
  rows_dev_ = cu::DeviceBuffer(), rows_dev_ = cu::DeviceBuffer(ctx_, capacity_ * (sizeof(cu::BatchRow) + sizeof(int)));
  staging_ = cu::PinnedBuffer(ctx_, capacity_ * (std::size_t{c.n_embd} * 4 + sizeof(cu::BatchRow) + sizeof(int)));
  attention_.reset();
  attention_.emplace(ctx_, static_cast<int>(capacity_), static_cast<int>(max_ctx_), static_cast<int>(c.n_head), static_cast<int>(c.head_dim));
}

void CudaBatch::step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) {
  const Config& c = w_->model().config();
  const std::size_t B = seqs.size(), d = c.n_embd, V = c.n_vocab;
  const auto s = checked_batch<CudaSequence>(c, seqs, tokens, [&](const CudaSequence& q) { return q.w_ == w_; }, "these CUDA weights");
  std::size_t max_ctx = 0, positions = 0;
  bool recording = false;
  for (std::size_t i = 0; i < B; ++i) {
    max_ctx = std::max(max_ctx, s[i]->n_ctx_), positions = std::max(positions, s[i]->pos_ + 1);
    recording |= s[i]->recorder_ != nullptr;
  }
  if (B == 0) return;
  if (B < min_gemm_batch(*w_) || recording || !s[0]->prefill_supported()) {  // the fused decode steps, one sequence at a time
    for (std::size_t i = 0; i < B; ++i) s[i]->forward(tokens.subspan(i, 1), false);
    return;
  }
  ctx_.make_current();
  reserve(B, max_ctx);
  ctx_.synchronize();  // the previous step's copies have read the staging buffer
  // Staging: embeddings [B][d], then the rows [capacity] and positions [capacity] as rows_dev_ holds them.
  auto* emb = static_cast<float*>(staging_.data());
  auto* rows = reinterpret_cast<cu::BatchRow*>(emb + capacity_ * d);
  auto* pos = reinterpret_cast<int*>(rows + capacity_);
  const Matrix& e = w_->model().token_embd;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols), kv_row = std::size_t{c.n_head_kv} * c.head_dim;
  const cu::api::CUdeviceptr pos_dev = rows_dev_.ptr() + capacity_ * sizeof(cu::BatchRow);
  for (std::size_t i = 0; i < B; ++i) {
    trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(tokens[i]) * rb, rb), e.cols),
                       std::span(emb + i * d, d));
    pos[i] = static_cast<int>(s[i]->pos_);
    rows[i] = {pos_dev + i * sizeof(int), s[i]->k_cache_.ptr(), s[i]->v_cache_.ptr(), s[i]->n_ctx_ * kv_row};
  }
  const cu::Driver& drv = ctx_.driver();
  cu::check(drv.memcpy_htod_async(pre_.x.ptr(), emb, B * d * 4, ctx_.stream()), "cuMemcpyHtoDAsync(batch embeddings)");
  cu::check(drv.memcpy_htod_async(rows_dev_.ptr(), rows, capacity_ * (sizeof(cu::BatchRow) + sizeof(int)), ctx_.stream()),
            "cuMemcpyHtoDAsync(batch rows)");

  const int n_head = static_cast<int>(c.n_head), n_kv = static_cast<int>(c.n_head_kv), hd = static_cast<int>(c.head_dim);
  const int group = n_head / n_kv;
  F16Staging::Pass operands(w_->staging());
  for (std::size_t l = 0; l < c.n_layer; ++l) {
    const DeviceLayer& w = w_->layers[l];
    operands.enter(l);
    cu::rmsnorm(ctx_, pre_.x.ptr(), w.attn_norm.ptr(), c.rms_eps, pre_.xn.ptr(), B, d);
    gemm_products(ctx_, {{&w.wq, pre_.q.ptr()}, {&w.wk, pre_.k.ptr()}, {&w.wv, pre_.v.ptr()}}, pre_.xn.ptr(), B, false, pre_, operands);
    if (w.bq.bytes() != 0) cu::add_rows(ctx_, pre_.q.ptr(), w.bq.ptr(), B, w.bq.bytes() / 4);
    if (w.bk.bytes() != 0) cu::add_rows(ctx_, pre_.k.ptr(), w.bk.ptr(), B, w.bk.bytes() / 4);
    if (w.bv.bytes() != 0) cu::add_rows(ctx_, pre_.v.ptr(), w.bv.ptr(), B, w.bv.bytes() / 4);
    cu::rope_append_batched(ctx_, pre_.q.ptr(), pre_.k.ptr(), pre_.v.ptr(), static_cast<int>(B), rows_dev_.ptr(), static_cast<int>(l),
                            n_head, n_kv, w_->rope);
    cu::attention_decode_batched(ctx_, pre_.q.ptr(), pre_.att.ptr(), static_cast<int>(B), rows_dev_.ptr(), static_cast<int>(l), *attention_,
                                 n_head, hd, group, static_cast<int>(kv_row), static_cast<int>(positions));
    gemm_products(ctx_, {{&w.wo, pre_.x.ptr()}}, pre_.att.ptr(), B, /*accumulate=*/true, pre_, operands);  // x += Wo att
    cu::rmsnorm(ctx_, pre_.x.ptr(), w.ffn_norm.ptr(), c.rms_eps, pre_.xn.ptr(), B, d);
    gemm_products(ctx_, {{&w.gate, pre_.gate.ptr()}, {&w.up, pre_.up.ptr()}}, pre_.xn.ptr(), B, false, pre_, operands);
    cu::swiglu(ctx_, pre_.gate.ptr(), pre_.up.ptr(), B * c.n_ff);
    gemm_products(ctx_, {{&w.down, pre_.x.ptr()}}, pre_.gate.ptr(), B, /*accumulate=*/true, pre_, operands);
  }
  cu::rmsnorm(ctx_, pre_.x.ptr(), w_->output_norm.ptr(), c.rms_eps, pre_.xn.ptr(), B, d);
  gemm_products(ctx_, {{&w_->output, pre_.logits.ptr()}}, pre_.xn.ptr(), B, false, pre_, operands);
  ctx_.synchronize();
  logits_.resize(B * V);
  pre_.logits.download(logits_.data(), B * V * 4);
  for (std::size_t i = 0; i < B; ++i) {
    s[i]->logits_.assign(logits_.begin() + i * V, logits_.begin() + (i + 1) * V);
    s[i]->device_row_ = s[i]->host_stale_ = false;  // host logits: sample() takes the host path
    ++s[i]->pos_;
  }
}

}  // namespace realizar::cuda_forward
