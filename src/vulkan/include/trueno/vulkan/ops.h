// The Vulkan decode ops (shaders/*.comp, some built from the CUDA kernels through decy), recorded into a Recorder (context.h): each call records one
// dispatch; nothing runs until Recorder::submit(). Buffers are whole Vulkan buffers of the recorder's
// context. Every op has a contract against its CPU kernel (contracts/gpu/vulkan.yaml).
#pragma once
#include <cstddef>
#include <cstdint>

#include "trueno/quant.h"
#include "trueno/vulkan/context.h"

namespace trueno::vulkan {

// The weight types gemv takes: every weight type of the CPU's quant_matvec (F32, F16, BF16, Q4_0, Q8_0,
// Q4_K, Q5_K, Q6_K); not Q8_K (an activation format). gemv throws InvalidArgument for the others.
bool gemv_supports(QuantType type);
// Whether gemv of this type and width runs gemv_rows.comp (a subgroup per row) on c, else gemv.comp
// (Note [Vulkan GEMV per subgroup], ops.cpp).
bool gemv_by_subgroup(const Context& c, QuantType type, std::size_t cols);

// y[r][rows] (+)= W x[r] for r < m activation rows (m <= kMaxGemvRows; several rows share each weight
// read): W is `rows` rows of quant_row_bytes(type, cols) bytes (GGUF layout), x is m x cols f32, y is
// m x rows f32. accumulate adds to y instead of overwriting it. One workgroup per block of rows; the
// f32 activations multiply the dequantized weights (no activation quantization).
inline constexpr std::size_t kMaxGemvRows = 8;
void gemv(Recorder& r, QuantType type, const Buffer& w, std::size_t rows, std::size_t cols, const Buffer& x, std::size_t m,
          Buffer& y, bool accumulate = false);

// out[r] = rmsnorm(x[r]) * weight for `count` rows of n (trueno::ops::rmsnorm).
// Y[t][rows] (+)= W x[t] for T activation rows (a prompt), any T: a tiled GEMM (Note [Vulkan prefill
// GEMM], ops.cpp). Weight types as gemv; cols a multiple of 32 (gemm_supports).
bool gemm_supports(QuantType type, std::size_t cols);
// Whether gemm runs gemm_coopmat.comp (f16 operands on tensor cores) on c, else gemm.comp (f32).
bool gemm_on_tensor_cores(const Context& c);
void gemm(Recorder& r, QuantType type, const Buffer& w, std::size_t rows, std::size_t cols, const Buffer& x, std::size_t T, Buffer& y,
          bool accumulate = false);

void rmsnorm(Recorder& r, const Buffer& x, const Buffer& weight, float eps, Buffer& out, std::size_t count, std::size_t n);

// RoPE in place on `heads` heads of head_dim values at the position read from pos (an int32 buffer):
// pairs (2i, 2i+1) or, neox, (i, i + rope_dim/2) for i < rope_dim/2, angle pos * theta_scale^i (divided by
// freqs[i] when freqs is given).
struct RopeParams {
  int head_dim = 0, rope_dim = 0;
  float theta_scale = 0.0f;
  const Buffer* freqs = nullptr;
  bool neox = false;
};
// rows > 1: rows consecutive positions, row r at pos + r (a prompt's tokens).
void rope(Recorder& r, Buffer& v, int heads, const Buffer& pos, const RopeParams& p, std::size_t rows = 1);

// k, v (n f32 each) rounded to f16 (round to nearest even) into slot pos (read from the int32 buffer) of
// the caches k_cache, v_cache (slots x n f16). n must be even.
// rows > 1: rows x n values each, row r into slot pos + r.
void kv_append(Recorder& r, const Buffer& k, const Buffer& v, Buffer& k_cache, Buffer& v_cache, const Buffer& pos, std::size_t n,
               std::size_t rows = 1);
// The module kv_append dispatches on c: "kv_append_decy" (from src/cuda/kernels/layer_ops.cu through decy)
// for one row where the build made it and the device can run it, else "kv_append" (Note [Vulkan shaders
// from CUDA], ops.cpp).
const char* kv_append_module(const Context& c, std::size_t n, std::size_t rows);

// g[i] = silu(g[i]) * u[i] (trueno::ops::swiglu, in place).
void swiglu(Recorder& r, Buffer& g, const Buffer& u, std::size_t n);
// y[i] += x[i] (trueno::ops::add, in place).
void add_inplace(Recorder& r, Buffer& y, const Buffer& x, std::size_t n);
// The module swiglu / add_inplace dispatch on c for n values: the one decy built from the CUDA kernel of
// src/cuda/kernels/layer_ops.cu ("swiglu_decy", "add_decy") where the build made it and it fits, else the
// hand-written shader ("swiglu", "add") (Note [Vulkan shaders from CUDA], ops.cpp).
const char* swiglu_module(const Context& c, std::size_t n);
const char* add_inplace_module(const Context& c, std::size_t n);
// y[r][i] += b[i] for rows of n values (a bias on every row).
void add_bias(Recorder& r, Buffer& y, const Buffer& b, std::size_t rows, std::size_t n);
// The module add_bias dispatches on c: "add_rows_decy" (src/cuda/kernels/prefill_ops.cu's add_rows through
// decy) where the build made it and it fits, else "add" (Note [Vulkan shaders from CUDA], ops.cpp).
const char* add_bias_module(const Context& c, std::size_t rows, std::size_t n);
// Decode attention for one query position (positions 0..pos attended, pos read from the int32 buffer):
// att[h] = softmax(q_h . K_kvh / sqrt(head_dim)) V_kvh for every head h, kvh = h / group, over the f16
// caches (slots x kv_row), with q and the softmax weights rounded to f16 as the CPU pass does. Split over
// the sequence in chunks of kAttentionChunk positions (Note [Vulkan decode attention], ops.cpp);
// `positions` bounds the chunks dispatched (it must cover pos + 1; a recorded step covers a bucket).
inline constexpr std::size_t kAttentionChunk = 64;
// rows > 1: that many query rows at consecutive positions pos + r, each attending causally to positions
// up to its own (a prompt's tokens, their keys and values already appended); positions must cover the
// last row's. row0: the rows are q's and att's rows row0.. (at positions pos + row0 + r): a long prompt's
// rows go through a scratch of a few rows in turn.
struct AttentionScratch {
  AttentionScratch(Context& c, std::size_t n_ctx, std::size_t heads, std::size_t head_dim, std::size_t rows = 1);
  std::size_t n_ctx, heads, head_dim, chunks, rows;
  Buffer scores, stats, parts;  // [rows][heads][n_ctx], [rows][heads][chunks][2], [rows][heads][chunks][head_dim]
};
void attention_decode(Recorder& r, const Buffer& q, const Buffer& k_cache, const Buffer& v_cache, const Buffer& pos,
                      AttentionScratch& scratch, Buffer& att, std::size_t group, std::size_t kv_row, std::size_t positions,
                      std::size_t rows = 1, std::size_t row0 = 0);

// out[i] = argmax of row i of x (count rows of n; uint32; first index on ties, a NaN wins as ops::argmax).
void argmax(Recorder& r, const Buffer& x, std::size_t count, std::size_t n, Buffer& out);

}  // namespace trueno::vulkan
