// The CUDA sequence's prompt pass: T tokens through each layer together (forward.cpp's batch, on the GPU).
//
// Note [Batched prefill]
// Decode reads every weight once per token; a prompt's tokens share those reads. The products are cuBLAS
// GEMMs: each matrix dequantized to f16, a layer ahead on a second stream (Note [Dequantization ahead],
// f16_staging.h: 13.5 GB written per chunk for a 7B model, instead of keeping a second f16 copy of the
// weights), the activations cast to f16, f32 accumulation; F32 matrices are multiplied as f32. The small steps are one launch per layer for
// all T tokens, and attention is one flash kernel (Note [Flash prefill attention], ops/prefill.cpp; or,
// for head sizes it does not cover, two strided-batched GEMMs around a causal softmax). The arithmetic is
// the CPU's batch (activations rounded to f16 rather than quantized to Q8_K per 256: the f16 carries more
// bits). Long prompts go in chunks of kFlashChunk tokens, or, on the cuBLAS attention, chunks whose
// scratch, [n_head][T][positions] of f32 scores and f16 weights, stays under kAttentionScratchBytes.
//
// Note [FP8 prefill]
// With --prefill-precision fp8 every matrix is converted once, at load, to E4M3 with one scale per
// tensor (amax / 448), kept beside the file's blocks (1 byte per weight: 6.7 GB for a 7B model; a
// matrix whose sides are not multiples of 16, which Hopper's FP8 kernels need, stays on f16); each
// product's input is quantized the same way (its own amax, per call) and cuBLASLt multiplies with f32
// accumulation. E4M3 keeps 3 mantissa bits, so this path trades accuracy for tensor-core rate: it has
// its own, looser contract (gemm_fp8 in contracts/gpu/cuda.yaml) and end-to-end bounds. The norms and
// SwiGLU before a product leave the amax of what they write (cu::rmsnorm_amax, swiglu_amax: the same
// values), so those inputs are cast without a pass of their own over them; the attention's output is not.
#include <algorithm>
#include <cstdio>

#include "trueno/cuda/ops/convert.h"
#include "trueno/cuda/ops/gemm.h"
#include "trueno/cuda/ops/gemm_fp8.h"
#include "backends/cuda/cuda_sequence.h"
#include "trueno/quant.h"
#include "util/strcat.h"

namespace realizar::cuda_forward {
namespace {

constexpr std::size_t kMaxChunk = 512;
constexpr std::size_t kAttentionScratchBytes = std::size_t{512} << 20;
// With the flash attention (no scratch growing with the positions) prompts go in chunks of up to this
// many tokens: each chunk dequantizes every matrix once (Note [Batched prefill]), so fewer chunks pay
// less; 2048 tokens of a 7B model's activations take ~0.5 GB. Prompts that want every token's logits
// stay at kMaxChunk (T x n_vocab floats of them).
constexpr std::size_t kFlashChunk = 2048;

}  // namespace

bool CudaSequence::prefill_supported() const {
  static const bool have_cublas = [] {
    std::string why;
    if (cu::cublas(&why) != nullptr) return true;
    std::fprintf(stderr, "realizar: cuda: prompts run token by token: %s\n", why.c_str());
    return false;
  }();
  return have_cublas && c_.head_dim % 2 == 0 && c_.rope_dim % 2 == 0;
}

std::size_t CudaSequence::prefill_chunk(bool all_logits) const {
  if (options_.prefill_chunk != 0) return options_.prefill_chunk;
  const cu::api::CUdeviceptr kc = k_cache_.ptr(), vc = v_cache_.ptr();
  if (cu::auto_prefill_attention(static_cast<int>(c_.head_dim), static_cast<int>(kv_row_), kc, vc) == cu::PrefillAttention::Flash)
    return all_logits ? kMaxChunk : kFlashChunk;
  const std::size_t per_token = n_ctx_ * c_.n_head * (4 + 2);
  return std::clamp<std::size_t>(kAttentionScratchBytes / per_token, 16, kMaxChunk);
}

void reserve_products(const CudaWeights& wts, std::size_t T, bool all_logits, PrefillBuffers& pre_) {
  cu::Context& ctx_ = *wts.ctx;
  const Config& c_ = wts.model().config();
  const auto& options_ = wts.options;
  const std::size_t kv_row_ = std::size_t{c_.n_head_kv} * c_.head_dim;
  const std::size_t V = c_.n_vocab;
  if (all_logits && pre_.logits.bytes() < T * V * 4) pre_.logits = cu::DeviceBuffer(), pre_.logits = cu::DeviceBuffer(ctx_, T * V * 4);
  if (pre_.T >= T) return;
  pre_.x = cu::DeviceBuffer(), pre_.xn = cu::DeviceBuffer(), pre_.q = cu::DeviceBuffer(), pre_.k = cu::DeviceBuffer();
  pre_.v = cu::DeviceBuffer(), pre_.q16 = cu::DeviceBuffer(), pre_.att = cu::DeviceBuffer(), pre_.gate = cu::DeviceBuffer();
  pre_.up = cu::DeviceBuffer(), pre_.x16 = cu::DeviceBuffer();
  const std::size_t d = c_.n_embd, qd = std::size_t{c_.n_head} * c_.head_dim, ff = c_.n_ff;
  pre_.x = cu::DeviceBuffer(ctx_, T * d * 4), pre_.xn = cu::DeviceBuffer(ctx_, T * d * 4);
  pre_.q = cu::DeviceBuffer(ctx_, T * qd * 4), pre_.att = cu::DeviceBuffer(ctx_, T * qd * 4), pre_.q16 = cu::DeviceBuffer(ctx_, T * qd * 2);
  pre_.k = cu::DeviceBuffer(ctx_, T * kv_row_ * 4), pre_.v = cu::DeviceBuffer(ctx_, T * kv_row_ * 4);
  pre_.gate = cu::DeviceBuffer(ctx_, T * ff * 4), pre_.up = cu::DeviceBuffer(ctx_, T * ff * 4);
  pre_.x16 = cu::DeviceBuffer(ctx_, T * std::max({d, qd, ff}) * 2);
  if (options_.prefill == CudaOptions::Prefill::FP8) pre_.x8.emplace(ctx_, T * std::max({d, qd, ff}));
  pre_.staging = cu::PinnedBuffer(ctx_, T * d * 4);
  pre_.T = T;
}

void gemm_products(cu::Context& ctx_, std::initializer_list<GemmOut> outs, cu::api::CUdeviceptr x, std::size_t T, bool accumulate,
                   PrefillBuffers& pre_, F16Staging::Pass& f16, bool fp8_amax_ready) {
  const float beta = accumulate ? 1.0f : 0.0f;
  bool cast = false;
  for (const GemmOut& o : outs) {
    const DeviceMatrix& w = *o.w;
    if (w.fp8) {  // Note [FP8 prefill]
      if (!cast) {
        if (fp8_amax_ready)
          cu::cast_fp8_f32(ctx_, x, T * w.cols, *pre_.x8);
        else
          cu::quantize_fp8_f32(ctx_, x, T * w.cols, *pre_.x8);
        cast = true;
      }
      cu::gemm_fp8(ctx_, w.rows, T, w.cols, *w.fp8, *pre_.x8, o.y, beta);
      continue;
    }
    if (w.type == trueno::QuantType::F32) {
      cu::gemm(ctx_, cu::GemmOperand::F32, w.rows, T, w.cols, w.data.ptr(), x, o.y, beta);
      continue;
    }
    if (!cast) cu::cast_f16(ctx_, x, pre_.x16.ptr(), T * w.cols), cast = true;
    const cu::api::CUdeviceptr wf = w.f16.bytes() != 0 ? w.f16.ptr() : f16.f16(w);
    cu::gemm(ctx_, cu::GemmOperand::F16, w.rows, T, w.cols, wf, pre_.x16.ptr(), o.y, beta);
  }
}

void CudaSequence::prefill(std::span<const std::int32_t> tokens, bool all_logits, float* host_rows) {
  const std::size_t T = tokens.size(), V = c_.n_vocab, chunk = prefill_chunk(all_logits);
  for (std::size_t done = 0; done < T;) {
    const std::size_t n = std::min(chunk, T - done);
    const Logits logits = all_logits ? Logits::Host : done + n == T ? Logits::Device : Logits::None;
    prefill_chunk_run(tokens.subspan(done, n), logits, host_rows + (all_logits ? done * V : 0));
    done += n;
  }
}

void CudaSequence::prefill_chunk_run(std::span<const std::int32_t> tokens, Logits logits, float* host_rows) {
  const std::size_t T = tokens.size(), d = c_.n_embd, V = c_.n_vocab;
  reserve_prefill(T, logits == Logits::Host);
  ctx_.synchronize();  // earlier copies have read the staging buffer
  const Matrix& e = m_.token_embd;
  const std::size_t rb = trueno::quant_row_bytes(e.type, e.cols);
  auto* rows = static_cast<float*>(pre_.staging.data());
  for (std::size_t t = 0; t < T; ++t)
    trueno::dequantize(trueno::QuantRow::view(e.type, e.data.subspan(static_cast<std::size_t>(tokens[t]) * rb, rb), e.cols),
                       std::span(rows + t * d, d));
  cu::check(ctx_.driver().memcpy_htod_async(pre_.x.ptr(), rows, T * d * 4, ctx_.stream()), "cuMemcpyHtoDAsync(embeddings)");

  const int pos0 = static_cast<int>(pos_), group = static_cast<int>(c_.n_head / c_.n_head_kv);
  F16Staging::Pass f16(w_->staging());
  const bool fp8 = pre_.x8.has_value();  // Note [FP8 prefill]: the norms and SwiGLU leave their amax
  const auto norm = [&](const cu::DeviceBuffer& weight) {
    if (fp8)
      cu::rmsnorm_amax(ctx_, pre_.x.ptr(), weight.ptr(), c_.rms_eps, pre_.xn.ptr(), T, d, *pre_.x8);
    else
      cu::rmsnorm(ctx_, pre_.x.ptr(), weight.ptr(), c_.rms_eps, pre_.xn.ptr(), T, d);
  };
  for (std::size_t l = 0; l < c_.n_layer; ++l) {
    const DeviceLayer& w = layers_[l];
    f16.enter(l);
    norm(w.attn_norm);
    matmul({{&w.wq, pre_.q.ptr()}, {&w.wk, pre_.k.ptr()}, {&w.wv, pre_.v.ptr()}}, pre_.xn.ptr(), T, f16, false, fp8);
    if (w.bq.bytes() != 0) cu::add_rows(ctx_, pre_.q.ptr(), w.bq.ptr(), T, w.bq.bytes() / 4);
    if (w.bk.bytes() != 0) cu::add_rows(ctx_, pre_.k.ptr(), w.bk.ptr(), T, w.bk.bytes() / 4);
    if (w.bv.bytes() != 0) cu::add_rows(ctx_, pre_.v.ptr(), w.bv.ptr(), T, w.bv.bytes() / 4);
    const std::size_t layer_off = l * n_ctx_ * kv_row_ * sizeof(std::uint16_t);
    const cu::api::CUdeviceptr kc = k_cache_.ptr() + layer_off, vc = v_cache_.ptr() + layer_off;
    cu::rope_append_rows(ctx_, pre_.q.ptr(), pre_.k.ptr(), pre_.v.ptr(), T, static_cast<int>(c_.n_head), static_cast<int>(c_.n_head_kv),
                         pos0, rope_, pre_.q16.ptr(), kc, vc);
    cu::attention_prefill(ctx_, pre_.q16.ptr(), kc, vc, pre_.att.ptr(), T, pos0, pre_.attention, static_cast<int>(c_.n_head),
                          static_cast<int>(c_.head_dim), group, static_cast<int>(kv_row_));
    matmul({{&w.wo, pre_.x.ptr()}}, pre_.att.ptr(), T, f16, /*accumulate=*/true);  // the residual: x += Wo att

    norm(w.ffn_norm);
    matmul({{&w.gate, pre_.gate.ptr()}, {&w.up, pre_.up.ptr()}}, pre_.xn.ptr(), T, f16, false, fp8);
    if (fp8)
      cu::swiglu_amax(ctx_, pre_.gate.ptr(), pre_.up.ptr(), T * c_.n_ff, *pre_.x8);
    else
      cu::swiglu(ctx_, pre_.gate.ptr(), pre_.up.ptr(), T * c_.n_ff);
    matmul({{&w.down, pre_.x.ptr()}}, pre_.gate.ptr(), T, f16, /*accumulate=*/true, fp8);
  }
  pos_ += T;
  if (logits == Logits::None) return;
  if (logits == Logits::Host) {
    cu::rmsnorm(ctx_, pre_.x.ptr(), output_norm_.ptr(), c_.rms_eps, pre_.xn.ptr(), T, d);
    matmul({{&output_, pre_.logits.ptr()}}, pre_.xn.ptr(), T, f16);
    ctx_.synchronize();
    pre_.logits.download(host_rows, T * V * 4);
    return;
  }
  cu::rmsnorm(ctx_, pre_.x.ptr() + (T - 1) * d * 4, output_norm_.ptr(), c_.rms_eps, pre_.xn.ptr(), 1, d);
  matmul({{&output_, logits_dev_.ptr()}}, pre_.xn.ptr(), 1, f16);
  cu::argmax(ctx_, logits_dev_.ptr(), V, *sample_, scan_dev_.ptr());  // Note [Sampling on the device]
  finish_logits(nullptr);
}

}  // namespace realizar::cuda_forward
