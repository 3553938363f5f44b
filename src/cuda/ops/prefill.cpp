// Launchers for kernels/prefill_ops.cu and the prefill attention (prefill.h).
//
// Note [Flash prefill attention]
// The cuBLAS attention writes and re-reads [n_head][T][positions] scores (f32) and weights (f16): 3 GB
// for 512 tokens after 16K positions of a 32-head model, so long prompts went in small chunks (each
// chunk re-dequantizing every matrix) and the prompt ran at half the speed of an engine with fused
// attention. kernels/flash_attention.cu keeps the scores in registers: each block takes 64 query rows
// (the heads of a GQA group side by side, so they share K/V tiles), streams 64-key tiles of K and V
// through shared memory (cp.async; K of the next tile loads while V of this one is used), multiplies with
// mma.m16n8k16 (f16 operands, f32 accumulation) and keeps a running max and sum per row (online softmax).
// Fully masked tiles are never loaded; the diagonal tiles are masked per element. Memory: no scratch,
// 34 KB of shared memory per block (hd 128). Rounding: the weights exp(s - running max) are rounded to
// f16 before their product and divided by the f32 sum at the end, where the CPU rounds the normalized
// weight (Note [F16 attention]): the same relative error (2^-11 per weight), different bits; the
// contract (attention_prefill_flash) bounds it like the cuBLAS path's.
//
// Attention in cuBLAS's column-major terms, for head h (KV head g = h / group):
//   S_h (n_keys x T, ld n_keys) = K_g^T Q_h    K_g: hd x n_keys at k_cache + g hd, ld kv_row
//                                              Q_h: hd x T at q16 + h hd, ld n_head hd
//   P_h = softmax_causal(S_h) (f16)
//   O_h (hd x T, ld n_head hd)  = V_g P_h      V_g: hd x n_keys at v_cache + g hd, ld kv_row
// Heads h = g group + r for one r have constant strides (g -> g + 1), so each r is one strided-batched
// call over the KV heads.
#include "trueno/cuda/ops/prefill.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

api::CUfunction fn(Context& c, const char* name) { return c.function("prefill_ops", name); }

unsigned blocks(std::size_t n, unsigned per) { return static_cast<unsigned>((n + per - 1) / per); }

}  // namespace

void cast_f16(Context& c, api::CUdeviceptr x, api::CUdeviceptr y, std::size_t n) {
  if (n == 0) return;
  const api::CUfunction f = fn(c, "cast_f16");
  unsigned long long nn = n;
  void* params[] = {&x, &y, &nn};
  launch(c, f, std::min(blocks(n, 256), static_cast<unsigned>(c.info().sms) * 16), 1, 256, 1, params);
}

void add_rows(Context& c, api::CUdeviceptr y, api::CUdeviceptr b, std::size_t rows, std::size_t n) {
  if (rows == 0 || n == 0) return;
  const api::CUfunction f = fn(c, "add_rows");
  int nn = static_cast<int>(n);
  void* params[] = {&y, &b, &nn};
  launch(c, f, blocks(n, 256), static_cast<unsigned>(rows), 256, 1, params);
}

void rope_append_rows(Context& c, api::CUdeviceptr q, api::CUdeviceptr k, api::CUdeviceptr v, std::size_t T, int n_head, int n_kv,
                      int pos0, const RopeParams& p, api::CUdeviceptr q16, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache) {
  if (T == 0) return;
  if (p.head_dim % 2 != 0 || p.rope_dim % 2 != 0 || p.rope_dim > p.head_dim)
    throw InvalidArgument(strcat("cuda rope: rope dimension ", p.rope_dim, " and head size ", p.head_dim, " must be even, rope <= head"));
  const api::CUfunction f = fn(c, "rope_append_rows");
  int hd = p.head_dim, rd = p.rope_dim, neox = p.neox ? 1 : 0;
  float ts = p.theta_scale;
  api::CUdeviceptr freqs = p.freqs;
  if (p.rope_dim > 256) throw InvalidArgument(strcat("cuda rope: rope dimension ", p.rope_dim, " exceeds 256"));
  void* params[] = {&q, &k, &v, &n_head, &n_kv, &hd, &rd, &pos0, &ts, &freqs, &neox, &q16, &k_cache, &v_cache};
  launch(c, f, static_cast<unsigned>(T), 1, 256, 1, params);  // a block per token (kernels/prefill_ops.cu)
}

void PrefillAttentionScratch::reserve(Context& c, std::size_t T, std::size_t n_keys, int n_head) {
  const std::size_t n = T * n_keys * static_cast<std::size_t>(n_head);
  if (scores.bytes() < n * 4) scores = DeviceBuffer(), scores = DeviceBuffer(c, n * 4);
  if (weights.bytes() < n * 2) weights = DeviceBuffer(), weights = DeviceBuffer(c, n * 2);
}

bool flash_attention_applies(int hd, int kv_row, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache) {
  return (hd == 64 || hd == 128) && kv_row % 8 == 0 && (k_cache % 16) == 0 && (v_cache % 16) == 0;
}

PrefillAttention auto_prefill_attention(int hd, int kv_row, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache) {
  static const bool cublas_forced = [] {
    const char* e = std::getenv("TRUENO_CUDA_ATTENTION");
    return e != nullptr && std::string_view(e) == "cublas";
  }();
  return flash_attention_applies(hd, kv_row, k_cache, v_cache) && !cublas_forced ? PrefillAttention::Flash : PrefillAttention::Cublas;
}

namespace {

void attention_flash(Context& c, api::CUdeviceptr q16, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                     std::size_t T, int pos0, int n_head, int hd, int group, int kv_row) {
  const api::CUfunction f = c.function("flash_attention", hd == 64 ? "flash_attention_64" : "flash_attention_128");
  int t = static_cast<int>(T), nh = n_head, gr = group, row = kv_row;
  float scale_log2 = 1.4426950408889634f / std::sqrt(static_cast<float>(hd));
  void* params[] = {&q16, &k_cache, &v_cache, &out, &t, &pos0, &nh, &gr, &row, &scale_log2};
  launch(c, f, blocks(T * static_cast<std::size_t>(group), 64), static_cast<unsigned>(n_head / group), 128, 1, params);
}

}  // namespace

void attention_prefill(Context& c, api::CUdeviceptr q16, api::CUdeviceptr k_cache, api::CUdeviceptr v_cache, api::CUdeviceptr out,
                       std::size_t T, int pos0, PrefillAttentionScratch& a, int n_head, int hd, int group, int kv_row,
                       PrefillAttention how) {
  if (T == 0) return;
  const std::size_t n_keys = static_cast<std::size_t>(pos0) + T;
  if (pos0 < 0 || n_keys > INT_MAX || T * static_cast<std::size_t>(std::max(group, 1)) > INT_MAX || group < 1 || n_head % group != 0)
    throw ShapeError(strcat("cuda attention_prefill: ", T, " tokens over ", n_keys, " positions, ", n_head, " heads in groups of ",
                            group, " are outside its sizes"));
  if (how == PrefillAttention::Auto) how = auto_prefill_attention(hd, kv_row, k_cache, v_cache);
  if (how == PrefillAttention::Flash && !flash_attention_applies(hd, kv_row, k_cache, v_cache))
    throw InvalidArgument(strcat("cuda attention_prefill: the flash kernel covers head sizes 64 and 128 over 16-byte aligned caches, not ",
                                 hd, " (kv row ", kv_row, ")"));
  if (how == PrefillAttention::Flash)
    return attention_flash(c, q16, k_cache, v_cache, out, T, pos0, n_head, hd, group, kv_row);
  if (T * n_keys > INT_MAX)
    throw ShapeError(strcat("cuda attention_prefill: ", T, " tokens over ", n_keys, " positions: the cuBLAS path's score matrix is too large"));
  a.reserve(c, T, n_keys, n_head);
  const Cublas* b = cublas();
  const api::cublasHandle h = c.cublas_handle();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd)), one = 1.0f, zero = 0.0f;
  const int nk = static_cast<int>(n_keys), t = static_cast<int>(T), kv_heads = n_head / group, q_ld = n_head * hd;
  const long long plane = static_cast<long long>(T) * nk;  // one head's scores
  const auto ptr = [](api::CUdeviceptr p, long long offset_elems, int elem_bytes) {
    return reinterpret_cast<void*>(p + static_cast<api::CUdeviceptr>(offset_elems) * elem_bytes);
  };
  for (int r = 0; r < group; ++r)
    check_cublas(b->gemm_strided_batched_ex(h, api::kCublasOpT, api::kCublasOpN, nk, t, hd, &scale, ptr(k_cache, 0, 2), api::kCudaR16F,
                                            kv_row, hd, ptr(q16, static_cast<long long>(r) * hd, 2), api::kCudaR16F, q_ld,
                                            static_cast<long long>(group) * hd, &zero, ptr(a.scores.ptr(), r * plane, 4), api::kCudaR32F,
                                            nk, group * plane, kv_heads, api::kCublasCompute32F, api::kCublasGemmDefault),
                 "cublasGemmStridedBatchedEx(attention scores)");
  const api::CUfunction softmax = fn(c, "softmax_causal");
  api::CUdeviceptr s = a.scores.ptr(), p = a.weights.ptr();
  int keys = nk;
  void* params[] = {&s, &p, &keys, &pos0};
  launch(c, softmax, static_cast<unsigned>(T), static_cast<unsigned>(n_head), 256, 1, params);
  for (int r = 0; r < group; ++r)
    check_cublas(b->gemm_strided_batched_ex(h, api::kCublasOpN, api::kCublasOpN, hd, t, nk, &one, ptr(v_cache, 0, 2), api::kCudaR16F,
                                            kv_row, hd, ptr(a.weights.ptr(), r * plane, 2), api::kCudaR16F, nk, group * plane, &zero,
                                            ptr(out, static_cast<long long>(r) * hd, 4), api::kCudaR32F, q_ld,
                                            static_cast<long long>(group) * hd, kv_heads, api::kCublasCompute32F,
                                            api::kCublasGemmDefault),
                 "cublasGemmStridedBatchedEx(attention weights x values)");
}

}  // namespace trueno::cuda
