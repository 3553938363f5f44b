// realizar's CUDA backend: a model's weights on one device (uploaded once, shared read-only by every
// sequence on it) and a sequence's own state (KV cache, activations, graphs), used by its decode step
// (forward_cuda.cpp), its batched prefill (prefill_cuda.cpp) and its token pick (sample_cuda.cpp).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trueno/cuda/context.h"
#include "trueno/device.h"
#include "trueno/cuda/ops/batch.h"
#include "trueno/cuda/ops/gemm_fp8.h"
#include "trueno/cuda/ops/gemv.h"
#include "trueno/cuda/ops/layer.h"
#include "trueno/cuda/ops/prefill.h"
#include "trueno/cuda/ops/sample.h"
#include "realizar/model.h"
#include "realizar/sampler.h"
#include "backends/cuda/f16_staging.h"

namespace realizar::cuda_forward {

namespace cu = trueno::cuda;

struct DeviceMatrix {
  trueno::QuantType type = trueno::QuantType::F32;
  cu::DeviceBuffer data;
  std::size_t rows = 0, cols = 0;
  cu::WeightLayout layout = cu::WeightLayout::File;  // data's layout (Q8_0, Q6_K: split, gemv.h)
  cu::DeviceBuffer f16;  // the rows dequantized to f16, kept only with --decode-gemv cublas-f16
  std::optional<cu::Fp8Tensor> fp8;  // the rows as scaled E4M3, kept only with --prefill-precision fp8
};

struct DeviceLayer {
  cu::DeviceBuffer attn_norm, ffn_norm, bq, bk, bv;
  DeviceMatrix wq, wk, wv, wo, gate, up, down;
};

// A prefill batch's activations [T][.], grown on demand.
struct PrefillBuffers {
  std::size_t T = 0;
  cu::DeviceBuffer x, xn, q, k, v, q16, att, gate, up, x16, logits;
  std::optional<cu::Fp8Tensor> x8;  // --prefill-precision fp8: the products' input as E4M3
  cu::PrefillAttentionScratch attention;
  cu::PinnedBuffer staging;  // the embedding rows
};

// A model's weights on one CUDA device, in the file's types (plus f16 copies with --decode-gemv cublas-f16
// and E4M3 copies with --prefill-precision fp8).
class CudaWeights final : public DeviceWeights, public std::enable_shared_from_this<CudaWeights> {
 public:
  CudaWeights(const Model& m, const trueno::Device& device, const CudaOptions& options);
  std::unique_ptr<Sequence> new_sequence(std::size_t n_ctx) const override;
  std::unique_ptr<Batch> new_batch() const override;
  std::string backend_name() const override;
  const Model& model() const { return m_; }

  const Model& m_;
  std::shared_ptr<cu::Context> ctx;  // the device's context: its stream serves every sequence on these weights
  CudaOptions options;
  std::vector<DeviceLayer> layers;
  DeviceMatrix output;
  cu::DeviceBuffer output_norm, rope_freqs;
  cu::RopeParams rope{};
  // Every quantized matrix also has its f16 copy (w.f16): --decode-gemv cublas-f16, or resident GEMM
  // operands (Note [Resident f16 weights]).
  bool f16_copies = false;

  // The products' f16 operands (Note [Dequantization ahead]), made on first use.
  F16Staging& staging() const;

 private:
  void to_fp8();
  mutable std::mutex staging_mutex_;
  mutable std::unique_ptr<F16Staging> staging_;  // last: destroyed before the buffers and the context
};

// Y_i[T][rows] = X[T][cols] W_i^T (+= with accumulate) through cuBLAS, for prompt batches and the batched
// step; X is cast to f16 once when a matrix is not F32; a quantized matrix's f16 rows come from the pass
// (Note [Batched prefill], prefill_cuda.cpp; Note [Dequantization ahead]).
struct GemmOut {
  const DeviceMatrix* w;
  cu::api::CUdeviceptr y;
};
// fp8_amax_ready: x's amax is already in pre.x8 (cu::rmsnorm_amax / swiglu_amax made x), so an FP8
// product casts x without an amax pass (Note [FP8 prefill]).
void gemm_products(cu::Context& ctx, std::initializer_list<GemmOut> outs, cu::api::CUdeviceptr x, std::size_t T, bool accumulate,
                   PrefillBuffers& pre, F16Staging::Pass& f16, bool fp8_amax_ready = false);
// Grows pre (activations of T rows, logits of T rows when all_logits) for the weights' products.
void reserve_products(const CudaWeights& w, std::size_t T, bool all_logits, PrefillBuffers& pre);

class CudaSequence final : public Sequence {
 public:
  CudaSequence(std::shared_ptr<const CudaWeights> weights, std::size_t n_ctx);
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = kv_q8_valid_ = 0; }
  std::size_t kv_bytes() const override { return k_cache_.bytes() + v_cache_.bytes() + (kv_q8_ ? kv_q8_->bytes() : 0); }
  void forward(std::span<const std::int32_t> tokens, bool all_logits) override;
  // Note [Sampling on the device] (sample_cuda.cpp): without all_logits the row stays on the device, and
  // logits() copies it to the host on first use; sample() and logits_finite() need no copy.
  std::span<const float> logits() const override;
  std::int32_t sample(Sampler& s, std::span<const std::int32_t> history) override;
  bool logits_finite() const override;
  // "cuda", or with the non-default modes: "cuda/cublas-f16", "cuda/fp8-prefill", "cuda/token-prefill".
  std::string backend_name() const override { return w_->backend_name(); }
  void set_recorder(Recorder* r) override { recorder_ = r; }

 private:
  friend class CudaBatch;
  std::shared_ptr<const CudaWeights> w_;
  const Model& m_;
  const Config& c_;
  cu::Context& ctx_;
  const CudaOptions& options_;
  std::size_t n_ctx_, pos_ = 0, kv_row_;
  const std::vector<DeviceLayer>& layers_;
  const DeviceMatrix& output_;
  const cu::DeviceBuffer& output_norm_;
  cu::DeviceBuffer k_cache_, v_cache_;
  cu::DeviceBuffer x_, xn_, q_, k_, v_, att_, gate_, up_, logits_dev_, x16_;
  std::optional<cu::Q8Activations> xq_embd_, xq_ff_;  // when n_embd / n_ff are multiples of 256
  cu::DeviceBuffer pos_dev_;                            // int: the position being computed
  std::optional<cu::AttentionScratch> attention_;
  // --decode-attention q8 (Note [8-bit KV copy]): the copy, valid for positions [0, kv_q8_valid_).
  std::optional<cu::KvCopyQ8> kv_q8_;
  std::size_t kv_q8_valid_ = 0;
  cu::PinnedBuffer staging_;                            // [n_embd] floats, then the position
  // The last forward's logits: [T][n_vocab] on the host with all_logits; else one row in logits_dev_
  // (device_row_), its scan in scan_ (argmax, finiteness), its host copy made by logits() on first use.
  mutable std::vector<float> logits_;
  mutable bool host_stale_ = false;  // logits_ does not hold logits_dev_'s row yet
  bool device_row_ = false;
  cu::ArgmaxResult scan_{};
  std::optional<cu::SampleScratch> sample_;
  cu::DeviceBuffer scan_dev_, picked_dev_;     // the step's ArgmaxResult; sample()'s result (top_k_bytes(kMaxTopK))
  cu::DeviceBuffer penalized_, ids_dev_;       // [n_vocab] penalized logits; the penalized ids (made on first use)
  cu::PinnedBuffer readback_, ids_host_;       // the step's ArgmaxResult, then sample()'s result; the penalized ids
  std::vector<Sampler::Candidate> best_;       // sample()'s top-k candidates on the host
  const cu::RopeParams& rope_;
  bool use_graphs_;
  bool warmed_[2] = {false, false};  // an eager step has run (modules loaded) without / with logits
  std::map<std::pair<bool, std::size_t>, cu::Graph> graphs_;  // (logits, position bucket) -> decode graph
  PrefillBuffers pre_;
  Recorder* recorder_ = nullptr;
  bool recording_ = false;          // this step is eager and taps its buffers (Note [Intermediates], recorder.cpp)
  std::vector<float> tapped_, ffn_inp_;
  // While recording_: downloads b's first n floats and records them (l_out also records ffn_out).
  void tap(int layer, std::string_view tensor, const cu::DeviceBuffer& b, std::size_t n);

  struct Product {
    const DeviceMatrix* w;
    const cu::DeviceBuffer* y;
  };
  // Decode: y_i = W_i x (y_i += W_i x with accumulate) for matrices reading the same x, x quantized to
  // Q8_K once when a type needs it; matrices of one type in a row share a launch (q, k, v; gate, up).
  // x_quantized: xq already holds Q8_K(x) (a fused kernel wrote it).
  void linear(std::initializer_list<Product> products, const cu::DeviceBuffer& x, std::optional<cu::Q8Activations>& xq,
              bool accumulate = false, bool x_quantized = false);
  // Whether products are one or two Q4_K matrices, then one Q6_K in the split layout, all as wide (a Q4_K_M
  // model's q, k, v): one launch of gemv_q4_k_q6_k (Note [Q4_K and Q6_K in one launch]).
  bool mixed_launch(std::initializer_list<Product> products) const;
  // The logits a decode step or prefill chunk computes: none, its last token's (kept in logits_dev_ and
  // scanned into scan_), or every token's, copied to the host too.
  enum class Logits { None, Device, Host };
  // The decode step's launches for positions below `bucket` (attention covers that many); with logits,
  // the LM head into logits_dev_ and its scan into scan_dev_.
  void enqueue(bool logits, std::size_t bucket);
  // Layer li's rope_append and attention over its cache (at byte offset layer_off) or the 8-bit copy, into att_.
  void rope_and_attend(int li, std::size_t layer_off, std::size_t bucket);
  // Whether a step whose attention covers `bucket` positions reads the 8-bit KV copy (Note [8-bit KV copy]).
  bool reads_kv_copy(std::size_t bucket) const;
  // Quantizes the positions written since the copy was last valid (prompt passes, batched steps) into it.
  void update_kv_copy();
  // Note [Decode graph]: the power-of-two multiple of 64 positions (capped at n_ctx) that covers pos.
  std::size_t bucket_for(std::size_t pos) const;
  // One token; with Logits::Host its logits are copied into host_row [n_vocab].
  void step(std::int32_t token, Logits logits, float* host_row);
  // Waits for the step's LM head and scan (enqueued), reads the scan into scan_, and copies logits_dev_
  // into host_row [n_vocab] when not null.
  void finish_logits(float* host_row);
  // Note [Temperature alone]: the draw over the device row (penalized if the sampler says so), one
  // number from s's generator, the id back.
  std::int32_t draw_on_device(Sampler& s, std::span<const std::int32_t> history);
  // The logits with the repetition penalty on ids, in penalized_ (logits_dev_ is left as it is).
  cu::api::CUdeviceptr penalized_logits(const std::vector<std::int32_t>& ids, float penalty);

  // Prefill (prefill_cuda.cpp): T tokens from pos_ through cuBLAS products; logits of every token into
  // host_rows [T][n_vocab] when all_logits, else of the last token into logits_dev_ (Logits::Device).
  bool prefill_supported() const;
  std::size_t prefill_chunk(bool all_logits) const;
  void prefill(std::span<const std::int32_t> tokens, bool all_logits, float* host_rows);
  void prefill_chunk_run(std::span<const std::int32_t> tokens, Logits logits, float* host_rows);
  void matmul(std::initializer_list<GemmOut> outs, cu::api::CUdeviceptr x, std::size_t T, F16Staging::Pass& f16,
              bool accumulate = false, bool fp8_amax_ready = false) {
    gemm_products(ctx_, outs, x, T, accumulate, pre_, f16, fp8_amax_ready);
  }
  void reserve_prefill(std::size_t T, bool all_logits) { reserve_products(*w_, T, all_logits, pre_); }
};

// Note [CUDA batched step]
// Many sequences on the same weights advance by one token each in one forward: the products run once for
// all B rows as cuBLAS GEMMs (as a prompt batch does: every weight read once per step instead of once per
// sequence), and rope + KV append and attention run for all B sequences in one launch each
// (kernels/batch_ops.cu: the single sequence's device bodies, each sequence at its own position in its
// own cache). A GEMM step of a quantized model dequantizes every matrix to f16 first (a layer ahead, Note
// [Dequantization ahead]): it writes and reads 13.5 GB for a 7B model, ~11.7 ms on the H200 at B = 2 and
// 14.3 ms at B = 64, against 2.7 ms per sequence for the fused GEMV step (measured, 7B Q4_K_M: B = 4 353
// tok/s as a GEMM step against 379 one by one, B = 8 663), so batches of fewer than kMinGemmBatch
// sequences step them one by one; with f16 copies of the weights
// (--decode-gemv cublas-f16) there is nothing to dequantize and the GEMMs pay from kMinGemmBatchF16; with
// resident f16 copies beside the fused decode (Note [Resident f16 weights]) a GEMM step reads 13.5 GB
// against 4 GB per sequence stepped by the fused GEMVs, so from kMinGemmBatchResident.
// REALIZAR_CUDA_GEMM_BATCH=N sets the smallest batch that takes the GEMM step (to measure the crossover).
class CudaBatch final : public Batch {
 public:
  static constexpr std::size_t kMinGemmBatch = 5, kMinGemmBatchF16 = 2, kMinGemmBatchResident = 4;
  static std::size_t min_gemm_batch(const CudaWeights& w);
  explicit CudaBatch(std::shared_ptr<const CudaWeights> weights);
  void step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) override;
  // Note [Joint prefill] (batch_prefill_cuda.cpp).
  void prefill(std::span<Sequence* const> seqs, std::span<const std::span<const std::int32_t>> chunks) override;
  // The most tokens one joint prefill pass takes (more go in several passes).
  static constexpr std::size_t kMaxJointTokens = 2048;

 private:
  void joint_pass(std::span<CudaSequence* const> s, std::span<const std::span<const std::int32_t>> chunks);
  std::shared_ptr<const CudaWeights> w_;
  cu::Context& ctx_;
  PrefillBuffers pre_;
  cu::DeviceBuffer rows_dev_, logits_dev_;
  cu::PinnedBuffer staging_;  // embeddings [B][n_embd], then the positions [B] and rows [B]
  std::optional<cu::BatchAttentionScratch> attention_;
  std::size_t capacity_ = 0, max_ctx_ = 0;
  std::vector<float> logits_;
  void reserve(std::size_t B, std::size_t max_ctx);
};

}  // namespace realizar::cuda_forward
