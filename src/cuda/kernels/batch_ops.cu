// The batched decode step's per-sequence kernels (Note [CUDA batched step], realizar/src/backends/cuda):
// rope + KV append and the three attention steps for B sequences in one launch each, sequence z =
// blockIdx.y (rope) or blockIdx.z (attention), each at its own position in its own cache. The bodies are
// the single sequence's (rope_append.cuh, attention.cuh), so a sequence's numbers do not depend on the batch.
#include "attention.cuh"
#include "rope_append.cuh"

// One sequence of the batch: its position and layer 0 of its f16 caches ([n_ctx][kv_row] per layer).
struct BatchRow {
  const int* pos;
  u16* kc;
  u16* vc;
  u64 layer_elems;  // elements per layer of its caches (n_ctx * kv_row)
};

extern "C" __global__ void rope_append_batched(float* __restrict__ q, float* __restrict__ k, const float* __restrict__ v,
                                               const BatchRow* __restrict__ rows, int layer, int n_head, int n_kv, int hd,
                                               int rope_dim, float theta_scale, const float* __restrict__ freqs, int neox) {
  const BatchRow r = rows[blockIdx.y];
  const int kv_row = n_kv * hd, z = blockIdx.y;
  const u64 off = static_cast<u64>(layer) * r.layer_elems;
  rope_append_body(q + static_cast<u64>(z) * n_head * hd, k + static_cast<u64>(z) * kv_row, v + static_cast<u64>(z) * kv_row, n_head,
                   n_kv, hd, rope_dim, *r.pos, theta_scale, freqs, neox, r.kc + off, r.vc + off, blockIdx.x * blockDim.x + threadIdx.x);
}

// Scratch per sequence: s [n_head][max_ctx], ml [n_head][gridDim.y][2], o [n_head][gridDim.y][hd].
extern "C" __global__ void __launch_bounds__(256)
    attention_scores_batched(const float* __restrict__ q, const BatchRow* __restrict__ rows, int layer, int n_head, int hd, int group,
                             int kv_row, float scale, int max_ctx, float* __restrict__ s, float* __restrict__ ml) {
  const BatchRow r = rows[blockIdx.z];
  const u64 z = blockIdx.z;
  attention_scores_body(q + z * n_head * hd, r.kc + static_cast<u64>(layer) * r.layer_elems, *r.pos + 1, blockIdx.x, blockIdx.y,
                        gridDim.y, hd, group, kv_row, scale, max_ctx, s + z * n_head * max_ctx, ml + z * n_head * gridDim.y * 2);
}

extern "C" __global__ void __launch_bounds__(256)
    attention_weights_v_batched(const BatchRow* __restrict__ rows, int layer, int n_head, int hd, int group, int kv_row, int max_ctx,
                                const float* __restrict__ s, const float* __restrict__ ml, float* __restrict__ o) {
  const BatchRow r = rows[blockIdx.z];
  const u64 z = blockIdx.z;
  attention_weights_v_body(r.vc + static_cast<u64>(layer) * r.layer_elems, *r.pos + 1, blockIdx.x, blockIdx.y, gridDim.y, hd, group,
                           kv_row, max_ctx, s + z * n_head * max_ctx, ml + z * n_head * gridDim.y * 2,
                           o + z * n_head * gridDim.y * hd);
}

extern "C" __global__ void attention_combine_batched(const float* __restrict__ o, const BatchRow* __restrict__ rows, int n_head, int hd,
                                                     int max_chunks, float* __restrict__ out) {
  const u64 z = blockIdx.z;
  attention_combine_body(o + z * n_head * max_chunks * hd, *rows[z].pos + 1, blockIdx.x, hd, max_chunks, out + z * n_head * hd);
}
