// A decoder-only transformer read from GGUF: configuration from metadata, weights as views into the
// mapped file (never dequantized copies), and the CPU forward pass over a KV cache.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "realizar/gguf.h"
#include "realizar/kv_cache.h"
#include "trueno/backend.h"
#include "trueno/device.h"
#include "trueno/quant.h"

namespace realizar {

class Recorder;  // realizar/recorder.h
class Sampler;   // realizar/sampler.h

enum class Arch { Llama, Qwen2 };

struct Config {
  Arch arch = Arch::Llama;
  std::string arch_name;
  std::uint32_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0, n_ff = 0;
  std::uint32_t n_ctx_train = 0, rope_dim = 0;
  float rope_base = 10000.0f, rms_eps = 1e-5f;
  bool rope_neox = false;          // qwen2: rotate (i, i + d/2) pairs; llama: (2i, 2i + 1)
  bool tied_embeddings = false;    // no output.weight: the LM head is token_embd
  bool has_rope_freqs = false;     // Llama 3: rope_freqs.weight divides each frequency

  // Throws FormatError naming the missing key, or the unsupported architecture and the supported ones.
  static Config from_gguf(const gguf::File& f);
  std::string describe() const;
};

// A weight matrix [rows][cols] (GGUF ne = {cols, rows}) in the file's type.
struct Matrix {
  trueno::QuantType type = trueno::QuantType::F32;
  std::span<const std::byte> data;
  std::size_t rows = 0, cols = 0;
};

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;   // [n_embd]
  Matrix wq, wk, wv, wo;                    // [n_head*hd][n_embd], [n_kv*hd][n_embd] x2, [n_embd][n_head*hd]
  std::vector<float> bq, bk, bv;            // qwen2 biases (empty for llama)
  Matrix gate, up, down;                    // [n_ff][n_embd] x2, [n_embd][n_ff]
};

// Note [Packed CPU weights]
// The CPU decode step multiplies its Q4_K and Q6_K matrices through trueno::PackedQuantMatrix: rows
// repacked 8 at a time so that one register holds 8 rows (Note [Interleaved rows] in trueno's
// src/quant/blocks.h), per row about 2x faster hot than the single-row dot on AVX2 (Q4_K and Q6_K); on
// AVX-512 2x for Q4_K, 1.1-1.4x for Q6_K (docs/PERFORMANCE.md); the same results bit for bit. The cost
// is memory: a second copy of every such matrix (+2.8% for Q4_K's decoded scales) in RAM beside the
// mapped file, which prefill keeps reading: 613 MiB for a 1.1B Q4_K_M model. Packed once per Model, on
// the first CPU decode step (so never for weights that only go to a GPU), shared by every CPU sequence;
// only where the CPU tier has the 8-row kernels (AVX2 / AVX-512). REALIZAR_REPACK=0 turns it off.
struct PackedWeights {
  struct Layer {
    std::optional<trueno::PackedQuantMatrix> wq, wk, wv, wo, gate, up, down;
  };
  std::vector<Layer> layers;
  std::optional<trueno::PackedQuantMatrix> output;
  std::size_t bytes = 0;  // the packed copies' size
};

class Model {
 public:
  // Views into `file`, which must outlive the model. Checks every tensor's presence, type and shape.
  Model(const gguf::File& file, Config config);
  // A model of this configuration without weights, which the caller then sets: a tensor-parallel rank's
  // shard (tp/shard.h), whose configuration counts its own heads and FFN columns.
  struct Unloaded {};
  Model(const gguf::File& file, Config config, Unloaded) : file_(&file), c_(std::move(config)) {}
  const Config& config() const { return c_; }
  const gguf::File& file() const { return *file_; }

  Matrix token_embd, output;               // output == token_embd when tied
  std::vector<float> output_norm;          // [n_embd]
  std::vector<float> rope_freqs;           // [rope_dim / 2] or empty
  std::vector<LayerWeights> layers;

  // The Q4_K and Q6_K matrices packed for the CPU decode step (Note [Packed CPU weights]): packed on the first
  // call (thread-safe; later calls wait for it), null when nothing is packed or REALIZAR_REPACK=0.
  const PackedWeights* cpu_packed() const;

 private:
  struct PackOnce {
    std::once_flag once;
    std::unique_ptr<PackedWeights> weights;
  };
  const gguf::File* file_;
  Config c_;
  std::shared_ptr<PackOnce> packed_ = std::make_shared<PackOnce>();  // shared by copies of the model
};

// Weight bytes one decoded token reads: every matrix once, one row of the embedding table.
std::uint64_t bytes_per_token(const gguf::File& f, const Config& c);

// One sequence on some backend: its KV cache and scratch; forward() appends tokens at position pos().
class Sequence {
 public:
  virtual ~Sequence() = default;
  virtual std::size_t n_ctx() const = 0;
  virtual std::size_t pos() const = 0;
  virtual void reset() = 0;
  virtual std::size_t kv_bytes() const = 0;
  // Runs tokens [T] at positions pos()..pos()+T-1. Fills logits [T][n_vocab] for every token when
  // all_logits, else only the last token's (logits() then has one row).
  virtual void forward(std::span<const std::int32_t> tokens, bool all_logits = false) = 0;
  virtual std::span<const float> logits() const = 0;
  // The next token s picks from logits() (one row: after forward without all_logits) given the tokens so
  // far: s.sample(logits(), history), the same token and generator state; a device sequence may pick it
  // where its logits are and copy back only the token (Note [Sampling on the device]).
  virtual std::int32_t sample(Sampler& s, std::span<const std::int32_t> history);
  // Whether every value of logits() is finite; a device sequence may answer without copying them.
  virtual bool logits_finite() const;
  // "avx2", "cuda", ...
  virtual std::string backend_name() const = 0;
  // Reports the named intermediates of each forward call's last token to r (recorder.h); nullptr stops.
  // r must outlive its use. Recording may take a slower path (CUDA: eager, token by token).
  virtual void set_recorder(Recorder* r) = 0;
};

// One step over many sequences of one backend and model (Note [Batched step]): tokens[i] goes to seqs[i]
// at seqs[i]->pos(); afterwards seqs[i]->logits() holds its row's logits. Throws (nothing advanced) on a
// full or repeated sequence, a token outside the vocabulary, a sequence of another backend or model, or
// OutOfKvBlocks.
class Batch {
 public:
  virtual ~Batch() = default;
  virtual void step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) = 0;
  // Prompt chunks of several sequences: chunks[i] (at least one token) goes to seqs[i] at its position;
  // afterwards each holds its last token's logits, as seqs[i]->forward(chunks[i]) leaves them. The
  // default checks the sizes (no empty chunk, none past its context, no sequence twice) and runs the
  // forwards one after another (each checks its tokens); a backend whose prompt products are GEMMs checks
  // everything first and runs them as one pass, so the prompts share each weight's read (Note [Joint
  // prefill], CUDA).
  virtual void prefill(std::span<Sequence* const> seqs, std::span<const std::span<const std::int32_t>> chunks);
};

// One row of a CPU forward step: a token at its position, and the cache it reads and appends to.
struct Row {
  std::int32_t token = 0;
  std::size_t pos = 0;
  KvCache* cache = nullptr;
};

// The CPU pass's activations for T rows, reused across steps.
struct CpuScratch {
  std::vector<float> x, xn, q, k_new, v_new, att, proj, gate, up, logits;  // [T][.]
  std::vector<float> kf, vf;  // one cache's layer widened to f32 for attention
};

// The CPU sequence (trueno's CPU kernels, the tier trueno selects): the prompt as one batch.
class Session final : public Sequence {
 public:
  // A sequence with a KV cache of its own (n_ctx positions, allocated now).
  Session(const Model& m, std::size_t n_ctx);
  // A sequence of up to n_ctx positions whose KV blocks come from a shared pool as it grows (Note [Paged
  // KV cache]); forward() throws OutOfKvBlocks when the pool runs out, with nothing advanced.
  Session(const Model& m, std::size_t n_ctx, std::shared_ptr<KvPool> pool);
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override;
  std::size_t kv_bytes() const override { return cache_.bytes(); }
  void forward(std::span<const std::int32_t> tokens, bool all_logits = false) override;
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override;
  const KvCache& kv_cache() const { return cache_; }
  void set_recorder(Recorder* r) override { recorder_ = r; }

 private:
  friend class CpuBatch;
  const Model& m_;
  const Config& c_;
  std::size_t n_ctx_, pos_ = 0;
  Recorder* recorder_ = nullptr;
  KvCache cache_;  // f16 (Note [F16 attention])
  CpuScratch w_;
  std::vector<Row> rows_;
  std::vector<float> logits_;
};

// Note [Batched step]
// One forward over many CPU sequences, one token each at its own position: every matrix is read once for
// all rows (quant_matmul, whose rows equal quant_matvec's bit for bit), each row's attention reads its own
// cache. So a sequence's logits are the same whether it steps alone or in any batch, bit for bit (tested),
// and sequences may join and leave between steps. The sequences must share the model.
class CpuBatch final : public Batch {
 public:
  explicit CpuBatch(const Model& m);
  // As Batch::step; every sequence must be a Session of this model.
  void step(std::span<Sequence* const> seqs, std::span<const std::int32_t> tokens) override;

 private:
  const Model& m_;
  CpuScratch w_;
  std::vector<Row> rows_;
  std::vector<Session*> sessions_;
};

// How the CUDA sequence multiplies (the commands' --decode-gemv, --prefill-precision and --gemm-weights).
struct CudaOptions {
  // Decode products: the fused quantized GEMV kernels, or (the baseline they are measured against)
  // every matrix dequantized to f16 once at load and multiplied by cuBLAS.
  enum class DecodeGemv { Fused, CublasF16 } decode_gemv = DecodeGemv::Fused;
  // Prompt batches: cuBLAS products of f16 operands (f32 accumulation), or FP8 E4M3 operands with
  // per-tensor scales (cuBLASLt), or no batching (every prompt token through the decode step).
  enum class Prefill { F16, FP8, TokenByToken } prefill = Prefill::F16;
  // Most tokens per prompt batch; 0: chosen from the context size (tests set small ones).
  std::size_t prefill_chunk = 0;
  // The f16 operands of the GEMMs (prompt batches, batched steps) with the fused decode: dequantized per
  // pass a layer ahead (staged), or once at load and kept beside the quantized blocks (resident: 2 more
  // bytes per weight, no dequantization per pass); auto: resident when both copies take at most half of
  // the device's free memory at load (Note [Resident f16 weights], forward_cuda.cpp).
  enum class GemmWeights { Auto, Staged, Resident } gemm_weights = GemmWeights::Auto;
  // Decode attention past 256 positions: over the f16 KV cache, or over an 8-bit copy of it kept beside
  // (Note [8-bit KV copy], src/cuda/kernels/attention.cuh: half the bytes per position, Q8_0's rounding
  // of K and V, 1.53x the cache's memory); heads of size 64 or 128.
  enum class DecodeAttention { F16, Q8 } decode_attention = DecodeAttention::F16;
};

// Parses "fused" / "cublas-f16" and "f16" / "fp8" / "tokens"; InvalidArgument naming the accepted values.
CudaOptions::DecodeGemv parse_decode_gemv(std::string_view s);
CudaOptions::Prefill parse_prefill_precision(std::string_view s);
CudaOptions::GemmWeights parse_gemm_weights(std::string_view s);  // "auto" / "staged" / "resident"
CudaOptions::DecodeAttention parse_decode_attention(std::string_view s);  // "f16" / "q8"

// A model's weights on one device (docs/ARCHITECTURE.md): uploaded once, read-only, shared by every
// sequence made from them (each sequence keeps them alive).
class DeviceWeights {
 public:
  virtual ~DeviceWeights() = default;
  // A new sequence of n_ctx positions on these weights: its own KV cache and scratch, no second upload.
  virtual std::unique_ptr<Sequence> new_sequence(std::size_t n_ctx) const = 0;
  // A batched step over sequences made by new_sequence (Note [CUDA batched step]).
  virtual std::unique_ptr<Batch> new_batch() const = 0;
  // "cuda", "cuda:1/fp8-prefill", ...
  virtual std::string backend_name() const = 0;
};

// Whether this build of realizar has a forward pass for devices of kind k (backends/<kind>/).
bool has_forward(trueno::DeviceKind k);
// Uploads the weights to `device` with realizar's forward pass for its kind (backends/cuda: prompts in
// batches through cuBLAS, generated tokens through the decode kernels; the CUDA options apply there).
// Throws trueno::BackendUnavailable naming the device when this build has no forward pass for its kind or
// the device is absent, InvalidArgument for a weight type that has no kernel there yet (naming the tensor).
std::shared_ptr<DeviceWeights> upload_weights(const Model& m, const trueno::Device& device, const CudaOptions& options = {});
// What identifies the device's arithmetic for the parity gate's verdict cache (device, driver, kernels, modes).
std::string device_identity(const trueno::Device& device, const CudaOptions& options = {});

// A sequence on `device` (its own weights upload), or, without one, on the CPU (the tier the caller has
// selected with trueno::set_backend, else the best).
std::unique_ptr<Sequence> make_sequence(const Model& m, std::size_t n_ctx, std::optional<trueno::Device> device = std::nullopt,
                                        const CudaOptions& cuda = {});

}  // namespace realizar
