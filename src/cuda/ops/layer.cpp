// Launchers for kernels/layer_ops.cu (layer.h).
#include "cuda/ops/layer.h"

#include <cmath>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

api::CUfunction fn(Context& c, const char* name) { return c.function("layer_ops", name); }

unsigned blocks(std::size_t n, unsigned per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

void rmsnorm(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr out, std::size_t rows, std::size_t n) {
  static api::CUfunction f = fn(c, "rmsnorm");
  int nn = static_cast<int>(n);
  void* params[] = {&x, &w, &eps, &out, &nn};
  launch(c, f, static_cast<unsigned>(rows), 1, 256, 1, params);
}

void rope(Context& c, api::CUdeviceptr v, int n_heads, api::CUdeviceptr pos, const RopeParams& p) {
  static api::CUfunction f = fn(c, "rope");
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  void* params[] = {&v, &n_heads, &hd, &rd, &pos, &ts, &freqs, &neox};
  launch(c, f, blocks(static_cast<std::size_t>(n_heads) * (rd / 2), 128), 1, 128, 1, params);
}

void kv_append(Context& c, api::CUdeviceptr k, api::CUdeviceptr v, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache,
               api::CUdeviceptr pos, int n) {
  static api::CUfunction f = fn(c, "kv_append");
  void* params[] = {&k, &v, &k_cache, &v_cache, &pos, &n};
  launch(c, f, blocks(static_cast<std::size_t>(n), 256), 1, 256, 1, params);
}

// Scores live in shared memory, n_ctx floats per head block, within the 48 KB a block gets without
// opting in to more. Longer contexts need the split-sequence kernel, not written yet.
void attention_decode(Context& c, api::CUdeviceptr q, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                      api::CUdeviceptr pos, int n_ctx, int n_head, int hd, int group, int kv_row) {
  if (n_ctx > kMaxAttentionPositions)
    throw InvalidArgument(strcat("cuda attention_decode: a context of ", n_ctx, " positions exceeds the ", kMaxAttentionPositions,
                                 " this kernel keeps in shared memory"));
  if (hd > 256) throw InvalidArgument(strcat("cuda attention_decode: head size ", hd, " > 256"));
  static api::CUfunction f = fn(c, "attention_decode");
  float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  void* params[] = {&q, &k_cache, &v_cache, &out, &pos, &hd, &group, &kv_row, &scale};
  launch(c, f, static_cast<unsigned>(n_head), 1, 256, 1, params, static_cast<unsigned>(n_ctx) * 4);
}

void swiglu(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, std::size_t n) {
  static api::CUfunction f = fn(c, "swiglu");
  int nn = static_cast<int>(n);
  void* params[] = {&g, &u, &nn};
  launch(c, f, blocks(n, 256), 1, 256, 1, params);
}

void add_inplace(Context& c, api::CUdeviceptr x, api::CUdeviceptr y, std::size_t n) {
  static api::CUfunction f = fn(c, "add_inplace");
  int nn = static_cast<int>(n);
  void* params[] = {&x, &y, &nn};
  launch(c, f, blocks(n, 256), 1, 256, 1, params);
}

}  // namespace trueno::cuda
