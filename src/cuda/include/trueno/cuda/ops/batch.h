// The batched decode step's per-sequence ops (kernels/batch_ops.cu): rope + KV append and decode attention
// for B sequences in one launch each, each sequence at its own position in its own cache.
#pragma once
#include <cstddef>
#include <cstdint>

#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/layer.h"

namespace trueno::cuda {

// One sequence of a batch, as the kernels read it (an array of these in device memory).
struct BatchRow {
  api::CUdeviceptr pos;          // const int*: the position being computed
  api::CUdeviceptr k_cache, v_cache;  // u16*: layer 0 of the sequence's caches
  std::uint64_t layer_elems;     // elements per layer of those caches (n_ctx * kv_row)
};
static_assert(sizeof(BatchRow) == 32);

// Attention scratch for up to max_batch sequences of up to max_ctx positions.
struct BatchAttentionScratch {
  BatchAttentionScratch(Context& c, int max_batch, int max_ctx, int n_head, int hd);
  int max_batch, max_ctx, n_chunks;
  DeviceBuffer scores, max_sum, partial;
};

// q [B][n_head * hd], k and v [B][kv_row]: row z rotated at rows[z]'s position, its k and v appended to
// its caches at `layer`.
void rope_append_batched(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, int batch, api::CUdeviceptr rows,
                         int layer, int n_head, int n_kv, const RopeParams& p);
// out [B][n_head * hd] = attention of q row z over positions [0, pos_z] of its caches at `layer`, as
// attention_decode; `positions` bounds every row's position + 1 (the launched chunks).
void attention_decode_batched(Context& c, api::CUdeviceptr q, api::CUdeviceptr out, int batch, api::CUdeviceptr rows, int layer,
                              BatchAttentionScratch& scratch, int n_head, int hd, int group, int kv_row, int positions);

}  // namespace trueno::cuda
