// Launchers for a prefill batch's small steps (kernels/prefill_ops.cu) and its causal attention (cuBLAS
// products around a masked softmax). T tokens at positions pos0 .. pos0 + T - 1; device pointers;
// asynchronous on the context's stream.
#pragma once
#include <cstddef>

#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/layer.h"

namespace trueno::cuda {

// y[n] = f16(x[n]).
void cast_f16(Context& c, api::CUdeviceptr x, api::CUdeviceptr y, std::size_t n);
// y[r][n] += b[n] for rows r < rows.
void add_rows(Context& c, api::CUdeviceptr y, api::CUdeviceptr b, std::size_t rows, std::size_t n);

// For each token t: rotates q[t][n_head][hd] and k[t][n_kv][hd] for position pos0 + t (p.freqs, p.neox
// as in rope), writes q as f16 to q16[t] and appends k, v [n_kv * hd] as f16 to the caches at pos0 + t.
void rope_append_rows(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, std::size_t T, int n_head, int n_kv,
                      int pos0, const RopeParams& p, api::CUdeviceptr q16, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache);

// Scores (f32) and softmax weights (f16) of one batch, [n_head][T][n_keys] each; grows on demand.
struct PrefillAttentionScratch {
  void reserve(Context& c, std::size_t T, std::size_t n_keys, int n_head);
  DeviceBuffer scores, weights;
};

// Which kernel computes attention_prefill; Auto: auto_prefill_attention's choice.
enum class PrefillAttention { Auto, Flash, Cublas };

// Whether the flash kernel covers head size hd (64 or 128) and caches at k_cache, v_cache (16-byte aligned
// rows: kv_row a multiple of 8).
bool flash_attention_applies(int hd, int kv_row, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache);
// Flash where it applies, unless TRUENO_CUDA_ATTENTION=cublas (for before/after measurements); else Cublas.
PrefillAttention auto_prefill_attention(int hd, int kv_row, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache);

// out[t][n_head * hd] (f32) = softmax(f16 q[t] . k_j / sqrt(hd)) times v_j, over the positions
// j <= pos0 + t of one layer's f16 cache [.][kv_row] (which already holds the batch's k and v); head h reads
// KV head h / group. Flash: one kernel, tiles of keys and values through shared memory, online softmax, the
// weights rounded to f16 before their product (Note [Flash prefill attention]); no scratch. Cublas: the
// scores (f32) and weights (f16, [n_head][T][positions] each, in scratch) are materialized around a causal
// softmax; the weights x values and scores are cuBLAS products with f32 accumulation, one strided-batched
// call per head of a group.
void attention_prefill(Context& c, api::CUdeviceptr q16, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                       std::size_t T, int pos0, PrefillAttentionScratch& scratch, int n_head, int hd, int group, int kv_row,
                       PrefillAttention how = PrefillAttention::Auto);

}  // namespace trueno::cuda
