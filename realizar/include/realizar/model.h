// A decoder-only transformer read from GGUF: configuration from metadata, weights as views into the
// mapped file (never dequantized copies), and the CPU forward pass over a KV cache.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "realizar/gguf.h"
#include "trueno/backend.h"

namespace realizar {

class Recorder;  // realizar/recorder.h

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

class Model {
 public:
  // Views into `file`, which must outlive the model. Checks every tensor's presence, type and shape.
  Model(const gguf::File& file, Config config);
  const Config& config() const { return c_; }
  const gguf::File& file() const { return *file_; }

  Matrix token_embd, output;               // output == token_embd when tied
  std::vector<float> output_norm;          // [n_embd]
  std::vector<float> rope_freqs;           // [rope_dim / 2] or empty
  std::vector<LayerWeights> layers;

 private:
  const gguf::File* file_;
  Config c_;
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
  // "avx2", "cuda", ...
  virtual std::string backend_name() const = 0;
  // Reports the named intermediates of each forward call's last token to r (recorder.h); nullptr stops.
  // r must outlive its use. Recording may take a slower path (CUDA: eager, token by token).
  virtual void set_recorder(Recorder* r) = 0;
};

// The CPU sequence (trueno's CPU kernels, the backend trueno selects): the prompt as one batch.
class Session final : public Sequence {
 public:
  Session(const Model& m, std::size_t n_ctx);
  std::size_t n_ctx() const override { return n_ctx_; }
  std::size_t pos() const override { return pos_; }
  void reset() override { pos_ = 0; }
  std::size_t kv_bytes() const override { return (k_.size() + v_.size()) * sizeof(std::uint16_t); }
  void forward(std::span<const std::int32_t> tokens, bool all_logits = false) override;
  std::span<const float> logits() const override { return logits_; }
  std::string backend_name() const override;
  void set_recorder(Recorder* r) override { recorder_ = r; }

 private:
  const Model& m_;
  const Config& c_;
  std::size_t n_ctx_, pos_ = 0;
  Recorder* recorder_ = nullptr;
  std::vector<std::uint16_t> k_, v_;  // f16 [n_layer][n_ctx][n_head_kv * head_dim] (Note [F16 attention])
  std::vector<float> kf_, vf_;         // one layer's cache widened to f32 for the attention of a batch
  std::vector<float> x_, xn_, q_, k_new_, v_new_, att_, proj_, gate_, up_, logits_;

  void attention(std::size_t layer, std::size_t T);
  void rope(float* v, std::size_t n_heads, std::size_t pos) const;
  // Records the last of `rows` rows of v when a recorder is set.
  void tap(int layer, std::string_view tensor, const std::vector<float>& v, std::size_t rows) const;
};

// How the CUDA sequence multiplies (the commands' --decode-gemv and --prefill-precision).
struct CudaOptions {
  // Decode products: the fused quantized GEMV kernels, or (the baseline they are measured against)
  // every matrix dequantized to f16 once at load and multiplied by cuBLAS.
  enum class DecodeGemv { Fused, CublasF16 } decode_gemv = DecodeGemv::Fused;
  // Prompt batches: cuBLAS products of f16 operands (f32 accumulation), or FP8 E4M3 operands with
  // per-tensor scales (cuBLASLt), or no batching (every prompt token through the decode step).
  enum class Prefill { F16, FP8, TokenByToken } prefill = Prefill::F16;
  // Most tokens per prompt batch; 0: chosen from the context size (tests set small ones).
  std::size_t prefill_chunk = 0;
};

// Parses "fused" / "cublas-f16" and "f16" / "fp8" / "tokens"; InvalidArgument naming the accepted values.
CudaOptions::DecodeGemv parse_decode_gemv(std::string_view s);
CudaOptions::Prefill parse_prefill_precision(std::string_view s);

// The CUDA sequence (forward_cuda.cpp): weights uploaded once; prompts in batches through cuBLAS
// (prefill_cuda.cpp), generated tokens one at a time through the decode kernels. Throws
// trueno::BackendUnavailable without a CUDA device, InvalidArgument for a weight type that has no CUDA
// kernel yet (naming the tensor).
std::unique_ptr<Sequence> make_cuda_sequence(const Model& m, std::size_t n_ctx, const CudaOptions& options = {});

// A sequence on `backend` (CUDA, or a CPU backend, which the caller has selected with trueno::set_backend).
std::unique_ptr<Sequence> make_sequence(const Model& m, std::size_t n_ctx, std::optional<trueno::Backend> backend,
                                        const CudaOptions& cuda = {});

}  // namespace realizar
