// The project's kernels that decy translates, as cases run on both backends on identical inputs: the CUDA
// original (NVRTC, trueno's CUDA context) and decy's SPIR-V (trueno's Vulkan context). One table drives the
// differential test (decy_cuda_table_test.cpp: the outputs compared under the kernel's contract in
// contracts/gpu/decy.yaml) and the speed report (decy_bench.cpp: microseconds per launch on each side).
// Each case gives the kernel's parameters in order: buffers (with their initial contents) and scalars,
// which the Vulkan side binds in order and packs as decy's header says (4- and 8-byte scalars, aligned).
#pragma once
#if defined(TRUENO_TESTS_WITH_VULKAN) && defined(DECY_TESTS_WITH_CUDA)
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "decy_vulkan_test_support.h"
#include "trueno/cuda/context.h"

namespace decy::cases {

enum class Elem { F32, F16, BF16, I32, U32, I8, I16, U64, F64 };
inline std::size_t elem_bytes(Elem e) {
  switch (e) {
    case Elem::F16: case Elem::BF16: case Elem::I16: return 2;
    case Elem::I8: return 1;
    case Elem::U64: case Elem::F64: return 8;
    default: return 4;
  }
}

// A buffer: element type, count, contents (normal(scale), zeros, integers in [lo, hi], or floats uniform in
// [from, to]), compared or not. Ints and Steps store each integer in the element's width (two's complement,
// little-endian: an I8 buffer of values in [-127, 127], a U64 buffer of 64-bit keys). `null`: CUDA's nullptr
// (a kernel's optional buffer); the Vulkan side binds the placeholder, its decy_has_ flag a VkFlag(0).
struct Buf {
  Elem elem = Elem::F32;
  std::size_t count = 0;
  enum class Init { Normal, Zero, Ints, Steps, Uniform } init = Init::Normal;  // Steps: lo + i x hi
  float scale = 1.0f;
  std::int64_t lo = 0, hi = 0;
  bool out = false;
  float from = 0.0f, to = 0.0f;
  bool null = false;
};
inline Buf in_f32(std::size_t n, float scale = 1.0f) { return {Elem::F32, n, Buf::Init::Normal, scale}; }
inline Buf out_f32(std::size_t n) { return {Elem::F32, n, Buf::Init::Zero, 1.0f, 0, 0, true}; }
inline Buf inout_f32(std::size_t n, float scale = 1.0f) { return {Elem::F32, n, Buf::Init::Normal, scale, 0, 0, true}; }
inline Buf in_f16(std::size_t n, float scale = 1.0f) { return {Elem::F16, n, Buf::Init::Normal, scale}; }
inline Buf in_bf16(std::size_t n, float scale = 1.0f) { return {Elem::BF16, n, Buf::Init::Normal, scale}; }
inline Buf out_of(Elem e, std::size_t n) { return {e, n, Buf::Init::Zero, 1.0f, 0, 0, true}; }
inline Buf ints(std::size_t n, std::int64_t lo, std::int64_t hi) { return {Elem::I32, n, Buf::Init::Ints, 1.0f, lo, hi}; }
inline Buf steps(std::size_t n, std::int64_t first, std::int64_t step) { return {Elem::I32, n, Buf::Init::Steps, 1.0f, first, step}; }
inline Buf ints_of(Elem e, std::size_t n, std::int64_t lo, std::int64_t hi) { return {e, n, Buf::Init::Ints, 1.0f, lo, hi}; }
inline Buf uniform_f32(std::size_t n, float from, float to) {
  return {Elem::F32, n, Buf::Init::Uniform, 1.0f, 0, 0, false, from, to};
}
inline Buf null_buf(Elem e) { return {e, 4, Buf::Init::Zero, 1.0f, 0, 0, false, 0.0f, 0.0f, true}; }

// A parameter: buffer `index`, or a scalar of type `elem` (F32 / I32 / U32 / U64); `vulkan_only`: one of
// decy's decy_has_<buffer> flags (u32, after the scalars, in the order decy's header lists them: 1 when the
// buffer holds data, 0 where CUDA gets nullptr), pushed to the Vulkan side only.
struct Param {
  int buffer = -1;
  Elem elem = Elem::I32;
  double f = 0;
  std::int64_t i = 0;
  bool vulkan_only = false;
};
inline Param B(int index) { return {index}; }
inline Param I32(std::int64_t v) { return {-1, Elem::I32, 0, v}; }
inline Param U32(std::int64_t v) { return {-1, Elem::U32, 0, v}; }
inline Param U64(std::int64_t v) { return {-1, Elem::U64, 0, v}; }
inline Param F32(double v) { return {-1, Elem::F32, v, 0}; }
inline Param F64(double v) { return {-1, Elem::F64, v, 0}; }
inline Param VkFlag(bool has_data) { return {-1, Elem::U32, 0, has_data ? 1 : 0, true}; }

struct Case {
  std::string label;   // the case's name in reports
  std::string module;  // src/cuda/kernels/<module>.cu
  std::string kernel;
  std::string spirv;   // decy's SPIR-V (decy/CMakeLists.txt: <module>_<kernel>[_warp32])
  std::string contract;
  unsigned block = 256, grid_x = 1, grid_y = 1;
  std::vector<Buf> bufs;
  std::vector<Param> params;
};

inline std::vector<Case> all_cases() {
  const std::size_t n = 100000, rows = 64, cols = 1000;
  const unsigned g = static_cast<unsigned>((n + 255) / 256);
  std::vector<Case> c;
  for (const int op : {0, 3, 8, 10, 12})
    c.push_back({"tensor_elementwise op " + std::to_string(op), "tensor_ops", "tensor_elementwise", "tensor_ops_tensor_elementwise",
                 "tensor_ops_tensor_elementwise", 256, g, 1, {in_f32(n), in_f32(n), out_f32(n)}, {B(0), B(1), B(2), U32(n), I32(op), F32(0.5)}});
  c.push_back({"tensor_softmax_rows", "tensor_ops", "tensor_softmax_rows", "tensor_ops_tensor_softmax_rows", "tensor_ops_tensor_softmax_rows",
               256, rows, 1, {in_f32(rows * cols, 3.0f), out_f32(rows * cols)}, {B(0), B(1), U32(cols), U32(rows)}});
  c.push_back({"tensor_rmsnorm_rows", "tensor_ops", "tensor_rmsnorm_rows", "tensor_ops_tensor_rmsnorm_rows", "tensor_ops_tensor_rmsnorm_rows",
               256, rows, 1, {in_f32(rows * cols), in_f32(cols), out_f32(rows * cols)}, {B(0), B(1), B(2), U32(cols), U32(rows), F32(1e-5)}});
  c.push_back({"tensor_layernorm_rows", "tensor_ops", "tensor_layernorm_rows", "tensor_ops_tensor_layernorm_rows",
               "tensor_ops_tensor_layernorm_rows", 256, rows, 1, {in_f32(rows * cols), in_f32(cols), in_f32(cols), out_f32(rows * cols)},
               {B(0), B(1), B(2), B(3), U32(cols), U32(rows), F32(1e-5)}});
  c.push_back({"tensor_f32_to_f16", "tensor_ops", "tensor_f32_to_f16", "tensor_ops_tensor_f32_to_f16", "tensor_ops_tensor_f32_to_f16", 256, g,
               1, {in_f32(n, 100.0f), out_of(Elem::F16, n)}, {B(0), B(1), U32(n)}});
  c.push_back({"tensor_f32_to_bf16", "tensor_ops", "tensor_f32_to_bf16", "tensor_ops_tensor_f32_to_bf16", "tensor_ops_tensor_f32_to_bf16", 256,
               g, 1, {in_f32(n, 100.0f), out_of(Elem::BF16, n)}, {B(0), B(1), U32(n)}});
  c.push_back({"tensor_add_bias_rows", "tensor_ops", "tensor_add_bias_rows", "tensor_ops_tensor_add_bias_rows", "tensor_ops_tensor_add_bias_rows",
               256, static_cast<unsigned>((rows * cols + 255) / 256), 1, {in_f32(rows * cols), in_f32(cols), out_f32(rows * cols)},
               {B(0), B(1), B(2), U32(cols), U32(rows * cols)}});
  c.push_back({"grad_norm_stats_rows", "grad_ops", "grad_norm_stats_rows", "grad_ops_grad_norm_stats_rows_warp32", "grad_ops_grad_norm_stats_rows",
               256, rows, 1, {in_f32(rows * cols), out_f32(2 * rows)}, {B(0), B(1), U32(cols), U32(rows), F32(1e-5), I32(1)}});
  c.push_back({"grad_bias_cols", "grad_ops", "grad_bias_cols", "grad_ops_grad_bias_cols", "grad_ops_grad_bias_cols", 256,
               static_cast<unsigned>((cols + 255) / 256), 1, {in_f32(rows * cols), out_f32(cols)}, {B(0), B(1), U32(cols), U32(rows), I32(0)}});
  c.push_back({"grad_causal_softmax_rows", "grad_ops", "grad_causal_softmax_rows", "grad_ops_grad_causal_softmax_rows_warp32",
               "grad_ops_grad_causal_softmax_rows", 256, rows, 1, {in_f32(rows * rows, 2.0f), out_f32(rows * rows)},
               {B(0), B(1), U32(rows), U32(rows), F32(0.125)}});
  c.push_back({"grad_adamw", "grad_ops", "grad_adamw", "grad_ops_grad_adamw", "grad_ops_grad_adamw", 256, g, 1,
               {inout_f32(n), in_f32(n), inout_f32(n, 0.1f), out_f32(n)},  // v starts at 0 (a second moment: never negative)
               {B(0), B(1), B(2), B(3), U32(n), F32(1e-3), F32(0.9), F32(0.999), F32(1e-8), F32(0.01), F32(0.1), F32(0.001)}});
  c.push_back({"cast_f16", "prefill_ops", "cast_f16", "prefill_ops_cast_f16", "prefill_ops_cast_f16", 256, g, 1,
               {in_f32(n, 100.0f), out_of(Elem::F16, n)}, {B(0), B(1), U64(n)}});
  c.push_back({"quantize_q8_k", "quantize_q8_k", "quantize_q8_k", "quantize_q8_k_quantize_q8_k_warp32", "quantize_q8_k", 256, 4096 / 256 * 4, 1,
               {in_f32(16384), out_of(Elem::I8, 16384), out_f32(64), out_of(Elem::I16, 1024)}, {B(0), B(1), B(2), B(3)}});
  c.push_back({"rmsnorm_quantize", "fused_ops", "rmsnorm_quantize", "fused_ops_rmsnorm_quantize_warp32", "fused_ops_rmsnorm_quantize", 256, 16, 1,
               {in_f32(4096), in_f32(4096), out_f32(4096), out_of(Elem::I8, 4096), out_f32(16), out_of(Elem::I16, 256)},
               {B(0), B(1), F32(1e-6), B(2), I32(4096), B(3), B(4), B(5)}});
  c.push_back({"swiglu_quantize", "fused_ops", "swiglu_quantize", "fused_ops_swiglu_quantize_warp32", "fused_ops_swiglu_quantize", 256, 43, 1,
               {inout_f32(11008), in_f32(11008), out_of(Elem::I8, 11008), out_f32(43), out_of(Elem::I16, 688)}, {B(0), B(1), B(2), B(3), B(4)}});
  c.push_back({"rmsnorm", "layer_ops", "rmsnorm", "layer_ops_rmsnorm", "layer_ops_rmsnorm", 256, 1, 1, {in_f32(4096), in_f32(4096), out_f32(4096)},
               {B(0), B(1), F32(1e-6), B(2), I32(4096)}});
  c.push_back({"swiglu_v4", "layer_ops", "swiglu_v4", "layer_ops_swiglu_v4", "layer_ops_swiglu_v4", 256, g / 4 + 1, 1, {inout_f32(n), in_f32(n)},
               {B(0), B(1), I32(n / 4)}});
  c.push_back({"repeat_penalty", "sample_ops", "repeat_penalty", "sample_ops_repeat_penalty", "sample_ops_repeat_penalty", 256, 1, 1,
               {inout_f32(32000, 3.0f), steps(64, 7, 499)}, {B(0), B(1), I32(64), F32(1.3)}});
  c.push_back({"tensor_f16_to_f32", "tensor_ops", "tensor_f16_to_f32", "tensor_ops_tensor_f16_to_f32", "tensor_ops_tensor_f16_to_f32", 256, g, 1,
               {in_f16(n, 10.0f), out_f32(n)}, {B(0), B(1), U32(n)}});
  c.push_back({"tensor_bf16_to_f32", "tensor_ops", "tensor_bf16_to_f32", "tensor_ops_tensor_bf16_to_f32", "tensor_ops_tensor_bf16_to_f32", 256, g,
               1, {in_bf16(n, 10.0f), out_f32(n)}, {B(0), B(1), U32(n)}});
  c.push_back({"tensor_softmax_backward_rows", "tensor_ops", "tensor_softmax_backward_rows", "tensor_ops_tensor_softmax_backward_rows",
               "tensor_ops_tensor_softmax_backward_rows", 256, rows, 1, {in_f32(rows * cols, 0.01f), in_f32(rows * cols), out_f32(rows * cols)},
               {B(0), B(1), B(2), U32(cols), U32(rows)}});
  for (const int op : {0, 2})  // stage 0: each of 40 blocks' partial sum (op 0) or dot (op 2)
    c.push_back({"tensor_reduce op " + std::to_string(op) + " stage 0", "tensor_ops", "tensor_reduce", "tensor_ops_tensor_reduce",
                 "tensor_ops_tensor_reduce", 256, 40, 1, {in_f32(n), in_f32(n), out_f32(40), out_f32(1)},
                 {B(0), B(1), B(2), B(3), U32(n), I32(op), I32(0), U32(40)}});
  c.push_back({"tensor_arg_reduce stage 0", "tensor_ops", "tensor_arg_reduce", "tensor_ops_tensor_arg_reduce", "tensor_ops_tensor_arg_reduce",
               256, 40, 1, {in_f32(n), out_f32(80), out_of(Elem::I32, 1)}, {B(0), B(1), B(2), U32(n), I32(0), I32(0), U32(40)}});
  c.push_back({"grad_norm_dx_rows", "grad_ops", "grad_norm_dx_rows", "grad_ops_grad_norm_dx_rows_warp32", "grad_ops_grad_norm_dx_rows", 256, rows,
               1, {in_f32(rows * cols), in_f32(cols), in_f32(rows * cols), in_f32(2 * rows), out_f32(rows * cols)},
               {B(0), B(1), B(2), B(3), B(4), U32(cols), U32(rows), I32(1)}});
  c.push_back({"grad_norm_params_cols", "grad_ops", "grad_norm_params_cols", "grad_ops_grad_norm_params_cols", "grad_ops_grad_norm_params_cols",
               256, static_cast<unsigned>((cols + 255) / 256), 1, {in_f32(rows * cols), in_f32(rows * cols), in_f32(2 * rows), out_f32(cols), out_f32(cols)},
               {B(0), B(1), B(2), B(3), B(4), U32(cols), U32(rows), I32(1), I32(0)}});
  c.push_back({"grad_cross_entropy_rows", "grad_ops", "grad_cross_entropy_rows", "grad_ops_grad_cross_entropy_rows_warp32",
               "grad_ops_grad_cross_entropy_rows", 256, rows, 1, {in_f32(rows * cols, 3.0f), ints(rows, 0, cols - 1), out_f32(rows * cols), out_f32(rows)},
               {B(0), B(1), B(2), B(3), U32(cols), U32(rows), F32(1.0 / rows)}});
  c.push_back({"grad_embedding_cols", "grad_ops", "grad_embedding_cols", "grad_ops_grad_embedding_cols", "grad_ops_grad_embedding_cols", 256,
               static_cast<unsigned>((cols + 255) / 256), 1, {ints(rows, -1, 99), in_f32(rows * cols), out_f32(100 * cols)},
               {B(0), B(1), B(2), U32(rows), U32(cols), U32(100), I32(0)}});
  c.push_back({"grad_rope_rows", "grad_ops", "grad_rope_rows", "grad_ops_grad_rope_rows", "grad_ops_grad_rope_rows", 256, 5 * 32 * 64 / 256, 1,
               {in_f32(5 * 32 * 128), out_f32(5 * 32 * 128)}, {B(0), B(1), U32(5), U32(32), U32(128), U32(128), U32(3000), F32(10000.0), I32(0)}});
  c.push_back({"amax_f32", "fp8_ops", "amax_f32", "fp8_ops_amax_f32", "fp8_ops_amax_f32", 256, 64, 1, {in_f32(n, 3.0f), out_of(Elem::U32, 1)},
               {B(0), U64(n), B(1)}});
  c.push_back({"amax_f16", "fp8_ops", "amax_f16", "fp8_ops_amax_f16", "fp8_ops_amax_f16", 256, 64, 1, {in_f16(n, 3.0f), out_of(Elem::U32, 1)},
               {B(0), U64(n), B(1)}});
  c.push_back({"fp8_from_f32", "fp8_ops", "fp8_from_f32", "fp8_ops_fp8_from_f32", "fp8_ops_fp8_from_f32", 256, g, 1,
               {in_f32(n), steps(1, 0x40800000, 0), out_of(Elem::I8, n), out_f32(1)}, {B(0), U64(n), B(1), B(2), B(3)}});
  c.push_back({"fp8_from_f32_v4", "fp8_ops", "fp8_from_f32_v4", "fp8_ops_fp8_from_f32_v4", "fp8_ops_fp8_from_f32_v4", 256, g / 4 + 1, 1,
               {in_f32(n), steps(1, 0x40800000, 0), out_of(Elem::U32, n / 4), out_f32(1)}, {B(0), U64(n / 4), B(1), B(2), B(3)}});
  c.push_back({"swiglu_amax", "fp8_ops", "swiglu_amax", "fp8_ops_swiglu_amax_warp32", "fp8_ops_swiglu_amax", 256, g, 1,
               {inout_f32(n), in_f32(n), out_of(Elem::U32, 1)}, {B(0), B(1), U64(n), B(2)}});
  c.push_back({"add_rows", "prefill_ops", "add_rows", "prefill_ops_add_rows", "prefill_ops_add_rows", 256, 4, 512,
               {inout_f32(512 * 1024), in_f32(1024)}, {B(0), B(1), I32(1024)}});
  c.push_back({"softmax_causal", "prefill_ops", "softmax_causal", "prefill_ops_softmax_causal", "prefill_ops_softmax_causal", 256, 8, 4,
               {in_f32(4 * 8 * 300, 3.0f), out_of(Elem::F16, 4 * 8 * 300)}, {B(0), B(1), I32(300), I32(200)}});
  c.push_back({"kv_append", "layer_ops", "kv_append", "layer_ops_kv_append", "layer_ops_kv_append", 256, 4, 1,
               {in_f32(1024), in_f32(1024), out_of(Elem::F16, 6 * 1024), out_of(Elem::F16, 6 * 1024), steps(1, 5, 0)},
               {B(0), B(1), B(2), B(3), B(4), I32(1024)}});
  c.push_back({"argmax_partial", "sample_ops", "argmax_partial", "sample_ops_argmax_partial", "sample_ops_argmax", 256, 8, 1,
               {in_f32(32000, 3.0f), out_of(Elem::U64, 8), out_of(Elem::I32, 8)}, {B(0), I32(32000), B(1), B(2)}});
  c.push_back({"temperature_draw", "sample_ops", "temperature_draw", "sample_ops_temperature_draw_warp32", "sample_ops_temperature_draw", 256, 1,
               1, {in_f32(32000, 3.0f), out_f32(32000), out_of(Elem::F64, 125), out_of(Elem::I32, 1)},
               {B(0), I32(32000), F32(1.0 / 0.7), F64(0.37), B(1), B(2), B(3)}});
  // The decode attention (layer_ops.cu, attention.cuh) at a 7B-like shape: head size 128 (the vector paths), 8 heads
  // in 4 KV heads (GQA group 2), position 300 of a 512-position cache: 301 positions, 5 chunks of 64, 2 blocks of
  // kQ8Keys = 256; grids and blocks as ops/layer.cpp launches them. The shuffling kernels in their --warp32 builds
  // (and attention_scores / _weights_v / _one_block also as plain subgroup shuffles: NVIDIA's subgroups are 32).
  // Each kernel's inputs are of its chain's form: caches as f16, scores normal, the chunks' (m, l) pairs in [1, 3]
  // (so L >= 1 and the weights exp(s - M) / L of normal scores within f16's range), the 8-bit copy's values in
  // [-127, 127] with f16 scales about 0.02 (absmax / 127 of unit-normal rows).
  {
    const int hd = 128, n_head = 8, group = 2, kv_row = n_head / group * hd, n_ctx = 512, pos = 300;
    const int chunks = (pos + 1 + 63) / 64, q8_blocks = (chunks + 3) / 4;
    const auto heads = static_cast<unsigned>(n_head);
    const std::size_t q = static_cast<std::size_t>(n_head) * hd, cache = static_cast<std::size_t>(n_ctx) * kv_row;
    const std::size_t s = static_cast<std::size_t>(n_head) * n_ctx, ml = static_cast<std::size_t>(n_head) * chunks * 2,
                      o = static_cast<std::size_t>(n_head) * chunks * hd;
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    for (const bool w32 : {true, false}) {
      const std::string sfx = w32 ? "_warp32" : "", lab = w32 ? "" : " (subgroups)";
      c.push_back({"attention_scores" + lab, "layer_ops", "attention_scores", "layer_ops_attention_scores" + sfx, "layer_ops_attention", 256,
                   heads, static_cast<unsigned>(chunks), {in_f32(q), in_f16(cache), steps(1, pos, 0), out_f32(s), out_f32(ml)},
                   {B(0), B(1), B(2), I32(hd), I32(group), I32(kv_row), F32(scale), I32(n_ctx), B(3), B(4)}});
      c.push_back({"attention_weights_v" + lab, "layer_ops", "attention_weights_v", "layer_ops_attention_weights_v" + sfx,
                   "layer_ops_attention", 256, heads, static_cast<unsigned>(chunks),
                   {in_f16(cache), steps(1, pos, 0), in_f32(s), uniform_f32(ml, 1.0f, 3.0f), out_f32(o)},
                   {B(0), B(1), I32(hd), I32(group), I32(kv_row), I32(n_ctx), B(2), B(3), B(4)}});
      // Up to kOneBlockPositions = 256 positions: position 200 of a 256-position cache.
      c.push_back({"attention_one_block" + lab, "layer_ops", "attention_one_block", "layer_ops_attention_one_block" + sfx,
                   "layer_ops_attention_one_block", 256, heads, 1,
                   {in_f32(q), in_f16(256 * kv_row), in_f16(256 * kv_row), steps(1, 200, 0), out_f32(q)},
                   {B(0), B(1), B(2), B(3), I32(hd), I32(group), I32(kv_row), F32(scale), B(4)}});
    }
    c.push_back({"attention_combine", "layer_ops", "attention_combine", "layer_ops_attention_combine", "layer_ops_attention_combine",
                 static_cast<unsigned>(hd), heads, 1, {in_f32(o), steps(1, pos, 0), out_f32(q)}, {B(0), B(1), I32(hd), I32(chunks), B(2)}});
    for (const int block_positions : {64, 256})  // the f16 kernels' partials, then the _q8 kernels' (every fourth chunk)
      c.push_back({"attention_combine_wide " + std::to_string(block_positions), "layer_ops", "attention_combine_wide",
                   "layer_ops_attention_combine_wide", "layer_ops_attention_q8", 256, heads, 1, {in_f32(o), steps(1, pos, 0), out_f32(q)},
                   {B(0), B(1), I32(hd), I32(chunks), I32(block_positions), B(2)}});
    const Buf k8 = ints_of(Elem::I8, cache, -127, 127), d8 = in_f16(cache / 32, 0.02f);
    c.push_back({"attention_scores_q8", "layer_ops", "attention_scores_q8", "layer_ops_attention_scores_q8_warp32", "layer_ops_attention_q8",
                 256, heads, static_cast<unsigned>(q8_blocks), {in_f32(q), k8, d8, steps(1, pos, 0), out_f32(s), out_f32(ml)},
                 {B(0), B(1), B(2), B(3), I32(hd), I32(group), I32(kv_row), F32(scale), I32(n_ctx), I32(chunks), B(4), B(5)}});
    c.push_back({"attention_weights_v_q8", "layer_ops", "attention_weights_v_q8", "layer_ops_attention_weights_v_q8_warp32",
                 "layer_ops_attention_q8", 256, heads, static_cast<unsigned>(q8_blocks),
                 {k8, d8, steps(1, pos, 0), in_f32(s), uniform_f32(ml, 1.0f, 3.0f), out_f32(o)},
                 {B(0), B(1), B(2), I32(hd), I32(group), I32(kv_row), I32(n_ctx), I32(chunks), B(3), B(4), B(5)}});
    c.push_back({"attention_one_pass_q8", "layer_ops", "attention_one_pass_q8", "layer_ops_attention_one_pass_q8_warp32",
                 "layer_ops_attention_one_pass_q8", 256, heads, static_cast<unsigned>(q8_blocks),
                 {in_f32(q), k8, d8, k8, d8, steps(1, pos, 0), out_f32(ml), out_f32(o)},
                 {B(0), B(1), B(2), B(3), B(4), B(5), I32(hd), I32(group), I32(kv_row), F32(scale), I32(chunks), B(6), B(7)}});
    c.push_back({"attention_combine_rescaled", "layer_ops", "attention_combine_rescaled", "layer_ops_attention_combine_rescaled_warp32",
                 "layer_ops_attention_one_pass_q8", 256, heads, 1, {in_f32(o), uniform_f32(ml, 1.0f, 3.0f), steps(1, pos, 0), out_f32(q)},
                 {B(0), B(1), B(2), I32(hd), I32(chunks), B(3)}});
    // kv_quantize_q8 (ops/layer.cpp's launch_kv_quantize): the decode step's row at *pos of one layer, grid
    // (blocks of 8 warps, 2: K and V); then positions [44, 300) of two layers with pos == nullptr (decy_has_pos 0).
    c.push_back({"kv_quantize_q8 at pos", "layer_ops", "kv_quantize_q8", "layer_ops_kv_quantize_q8_warp32", "layer_ops_kv_quantize_q8", 256,
                 static_cast<unsigned>((kv_row / 32 + 7) / 8), 2,
                 {in_f16(cache), in_f16(cache), out_of(Elem::I8, cache), out_of(Elem::F16, cache / 32), out_of(Elem::I8, cache),
                  out_of(Elem::F16, cache / 32), steps(1, pos, 0)},
                 {B(0), B(1), B(2), B(3), B(4), B(5), B(6), I32(0), I32(1), I32(kv_row), U64(cache), VkFlag(true)}});
    c.push_back({"kv_quantize_q8 rows", "layer_ops", "kv_quantize_q8", "layer_ops_kv_quantize_q8_warp32", "layer_ops_kv_quantize_q8", 256,
                 static_cast<unsigned>((256 * (kv_row / 32) + 7) / 8), 4,
                 {in_f16(2 * cache), in_f16(2 * cache), out_of(Elem::I8, 2 * cache), out_of(Elem::F16, 2 * cache / 32),
                  out_of(Elem::I8, 2 * cache), out_of(Elem::F16, 2 * cache / 32), null_buf(Elem::I32)},
                 {B(0), B(1), B(2), B(3), B(4), B(5), B(6), I32(44), I32(256), I32(kv_row), U64(cache), VkFlag(false)}});
    // rope_append (fused_ops.cu; ops/layer.cpp: blocks of 128 over (n_head + n_kv) x rope_dim / 2 + kv_row
    // threads): position 300, rope over the whole head, pairs (2i, 2i + 1), freqs in [1, 4] (llama 3's kind).
    const int n_kv = n_head / group, rope_dim = 128, threads = (n_head + n_kv) * (rope_dim / 2) + kv_row;
    const std::size_t rows = static_cast<std::size_t>(pos + 1) * kv_row;
    c.push_back({"rope_append", "fused_ops", "rope_append", "fused_ops_rope_append", "rope_append", 128,
                 static_cast<unsigned>((threads + 127) / 128), 1,
                 {inout_f32(q), inout_f32(kv_row), in_f32(kv_row), steps(1, pos, 0), uniform_f32(rope_dim / 2, 1.0f, 4.0f),
                  out_of(Elem::F16, rows), out_of(Elem::F16, rows)},
                 {B(0), B(1), B(2), I32(n_head), I32(n_kv), I32(hd), I32(rope_dim), B(3), F32(std::pow(10000.0, -2.0 / rope_dim)), B(4),
                  I32(0), B(5), B(6), VkFlag(true)}});
    // rope_append_rows (prefill_ops.cu; ops/prefill.cpp: a block of 256 per token): a 64-token prompt chunk
    // from position 236, rope over half the head (the rest copied), neox pairs, no freqs (decy_has_freqs 0).
    const int T = 64, pos0 = 236, rows_rope_dim = 64;
    const std::size_t rows_end = static_cast<std::size_t>(pos0 + T) * kv_row;
    c.push_back({"rope_append_rows", "prefill_ops", "rope_append_rows", "prefill_ops_rope_append_rows", "rope_append", 256,
                 static_cast<unsigned>(T), 1,
                 {in_f32(T * q), in_f32(static_cast<std::size_t>(T) * kv_row), in_f32(static_cast<std::size_t>(T) * kv_row),
                  null_buf(Elem::F32), out_of(Elem::F16, T * q), out_of(Elem::F16, rows_end), out_of(Elem::F16, rows_end)},
                 {B(0), B(1), B(2), I32(n_head), I32(n_kv), I32(hd), I32(rows_rope_dim), I32(pos0),
                  F32(std::pow(10000.0, -2.0 / rows_rope_dim)), B(3), I32(1), B(4), B(5), B(6), VkFlag(false)}});
  }
  // Greedy's second pass (ops/sample.cpp: one block of 256 over the parts; 126 parts: a 128,256-token
  // vocabulary): the parts' best keys as random u64 (any bit pattern), their flags random 0/1 (--warp32) and
  // all 0 (subgroups), so that both the OR's 1 and its 0 are compared.
  for (const bool w32 : {true, false})
    c.push_back({w32 ? "argmax_final" : "argmax_final (subgroups)", "sample_ops", "argmax_final",
                 w32 ? "sample_ops_argmax_final_warp32" : "sample_ops_argmax_final", "sample_ops_argmax", 256, 1, 1,
                 {in_f32(32000, 3.0f), ints_of(Elem::U64, 126, INT64_MIN, INT64_MAX), w32 ? ints(126, 0, 1) : steps(126, 0, 0),
                  out_of(Elem::I32, 2)},
                 {B(0), B(1), B(2), I32(126), B(3)}});
  // top_k_tiles (ops/sample.cpp: 1024 threads, a block per tile of 2048, k <= 1024): a first round over 32000
  // logits (16 tiles, in == nullptr: decy_has_in 0) keeping k = 40 keys per tile; a last round (one tile)
  // over 2000 logits; and a last round over 640 keys of an earlier round (in given), their ids in [0, 32000)
  // (keys 0xffffffff - id: the logits' key bits 0, so ranked by id).
  c.push_back({"top_k_tiles first round", "sample_ops", "top_k_tiles", "sample_ops_top_k_tiles", "sample_ops_top_k_tiles", 1024, 16, 1,
               {in_f32(32000, 3.0f), null_buf(Elem::U64), out_of(Elem::U64, 16 * 40), out_of(Elem::I32, 2 + 2 * 40)},
               {B(0), B(1), I32(32000), I32(40), B(2), B(3), VkFlag(false)}});
  c.push_back({"top_k_tiles last round", "sample_ops", "top_k_tiles", "sample_ops_top_k_tiles", "sample_ops_top_k_tiles", 1024, 1, 1,
               {in_f32(2000, 3.0f), null_buf(Elem::U64), out_of(Elem::U64, 40), out_of(Elem::I32, 2 + 2 * 40)},
               {B(0), B(1), I32(2000), I32(40), B(2), B(3), VkFlag(false)}});
  c.push_back({"top_k_tiles last round over keys", "sample_ops", "top_k_tiles", "sample_ops_top_k_tiles", "sample_ops_top_k_tiles", 1024,
               1, 1,
               {in_f32(32000, 3.0f), ints_of(Elem::U64, 640, 0xffffffffll - 31999, 0xffffffffll), out_of(Elem::U64, 40),
                out_of(Elem::I32, 2 + 2 * 40)},
               {B(0), B(1), I32(640), I32(40), B(2), B(3), VkFlag(true)}});
  // FP8 (ops/gemm_fp8.cpp: 256 threads, a grid of (n + 255) / 256 up to 8 per SM).
  c.push_back({"fp8_from_f16", "fp8_ops", "fp8_from_f16", "fp8_ops_fp8_from_f16", "fp8_ops_fp8_from_f16", 256, g, 1,
               {in_f16(n), steps(1, 0x40800000, 0), out_of(Elem::I8, n), out_f32(1)}, {B(0), U64(n), B(1), B(2), B(3)}});
  c.push_back({"amax_f32_v4", "fp8_ops", "amax_f32_v4", "fp8_ops_amax_f32_v4_warp32", "fp8_ops_amax_f32_v4", 256,
               static_cast<unsigned>((n / 4 + 255) / 256), 1, {in_f32(n, 3.0f), out_of(Elem::U32, 1)}, {B(0), U64(n / 4), B(1)}});
  // rmsnorm_amax: a block per row; amax's bits read as an f32 (the contract's first obligation bounds both outputs).
  c.push_back({"rmsnorm_amax", "fp8_ops", "rmsnorm_amax", "fp8_ops_rmsnorm_amax_warp32", "fp8_ops_rmsnorm_amax", 256, 64, 1,
               {in_f32(64 * 4096), in_f32(4096), out_f32(64 * 4096), out_f32(1)}, {B(0), B(1), F32(1e-6), B(2), I32(4096), B(3)}});
  // bench_read (src/cuda/cuda_bench.cpp: 256 threads, 8 blocks per SM, 132 SMs): 16 MB of words in [0, 255],
  // never = 7: about 1 thread in 256 has that xor, so some blocks write out[b] = 7 and the others keep 0xffffffff.
  c.push_back({"bench_read", "bench_read", "bench_read", "bench_read_bench_read", "bench_read_bench_read", 256, 1056, 1,
               {ints_of(Elem::U32, 4 << 20, 0, 255), {Elem::U32, 1056, Buf::Init::Steps, 1.0f, -1, 0, true}},
               {B(0), U64(1 << 20), U32(7), B(1)}});
  return c;
}

// One case's buffers on both sides, with identical contents.
struct Prepared {
  std::vector<std::vector<std::byte>> host;
  std::vector<std::unique_ptr<trueno::cuda::DeviceBuffer>> cuda;
  std::vector<std::unique_ptr<trueno::vulkan::Buffer>> vulkan;
  std::vector<trueno::cuda::api::CUdeviceptr> ptrs;
  std::vector<std::uint64_t> scalars;  // storage the CUDA parameter pointers point into
  std::vector<void*> cuda_params;
  std::vector<std::byte> push;
};

inline std::uint16_t to_f16_bits(float f) {  // round to nearest even (inputs are finite, |f| < 65504)
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const int e = static_cast<int>((x >> 23) & 0xff) - 112;
  std::uint32_t m = x & 0x7fffffu;
  if (e <= 0) return static_cast<std::uint16_t>(sign);
  std::uint32_t h = sign | (static_cast<std::uint32_t>(e) << 10) | (m >> 13);
  const std::uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(h);
}

inline Prepared prepare(const Case& k, trueno::cuda::Context& cuda, trueno::vulkan::Context& vk, std::mt19937_64& rng) {
  Prepared p;
  for (const Buf& b : k.bufs) {
    std::vector<std::byte> bytes(std::max<std::size_t>(b.count * elem_bytes(b.elem), 16));
    std::normal_distribution<float> normal(0.0f, b.scale);
    std::uniform_int_distribution<std::int64_t> in(b.lo, std::max(b.lo, b.hi));
    std::uniform_real_distribution<float> uniform(b.from, std::max(b.from, b.to));
    for (std::size_t i = 0; i < b.count && b.init != Buf::Init::Zero; ++i) {
      std::byte* at = bytes.data() + i * elem_bytes(b.elem);
      if (b.init == Buf::Init::Ints || b.init == Buf::Init::Steps) {  // the element's low bytes (little-endian)
        const std::int64_t v = b.init == Buf::Init::Ints ? in(rng) : b.lo + static_cast<std::int64_t>(i) * b.hi;
        std::memcpy(at, &v, elem_bytes(b.elem));
      } else if (b.init == Buf::Init::Uniform) {
        const float v = uniform(rng);
        std::memcpy(at, &v, 4);
      } else if (b.elem == Elem::F16) {
        const std::uint16_t h = to_f16_bits(normal(rng));
        std::memcpy(at, &h, 2);
      } else if (b.elem == Elem::BF16) {
        const float v = normal(rng);
        std::uint32_t w;
        std::memcpy(&w, &v, 4);
        const auto h = static_cast<std::uint16_t>(w >> 16);
        std::memcpy(at, &h, 2);
      } else {
        const float v = normal(rng);
        std::memcpy(at, &v, 4);
      }
    }
    p.cuda.push_back(std::make_unique<trueno::cuda::DeviceBuffer>(cuda, bytes.size()));
    p.cuda.back()->upload(bytes.data(), bytes.size());
    p.vulkan.push_back(std::make_unique<trueno::vulkan::Buffer>(vk, bytes.size()));
    p.vulkan.back()->upload(bytes.data(), bytes.size());
    p.ptrs.push_back(b.null ? trueno::cuda::api::CUdeviceptr{0} : p.cuda.back()->ptr());
    p.host.push_back(std::move(bytes));
  }
  p.scalars.reserve(k.params.size());
  for (const Param& a : k.params) {
    if (a.buffer >= 0) {
      p.cuda_params.push_back(&p.ptrs[static_cast<std::size_t>(a.buffer)]);
      continue;
    }
    std::uint64_t bits = 0;
    std::size_t size = 4;
    if (a.elem == Elem::F32) {
      const float f = static_cast<float>(a.f);
      std::memcpy(&bits, &f, 4);
    } else if (a.elem == Elem::U64) {
      bits = static_cast<std::uint64_t>(a.i), size = 8;
    } else if (a.elem == Elem::F64) {
      std::memcpy(&bits, &a.f, 8), size = 8;
    } else {
      const auto v = static_cast<std::uint32_t>(a.i);
      std::memcpy(&bits, &v, 4);
    }
    if (!a.vulkan_only) {
      p.scalars.push_back(bits);
      p.cuda_params.push_back(&p.scalars.back());
    }
    const std::size_t at = (p.push.size() + size - 1) / size * size;  // decy's push layout: aligned to its size
    p.push.resize(at + size);
    std::memcpy(p.push.data() + at, &bits, size);
  }
  return p;
}

inline const trueno::vulkan::Pipeline& pipeline(const Case& k, trueno::vulkan::Context& vk, const Prepared& p) {
  const std::uint32_t spec[1] = {k.block};
  return vk.pipeline_from_spirv(k.spirv, decy::test::spirv(k.spirv), static_cast<std::uint32_t>(k.bufs.size()),
                                static_cast<std::uint32_t>(p.push.size()), spec);
}

// Records `times` dispatches of the case (one Recorder: a barrier between dispatches).
inline void record_vulkan(const Case& k, trueno::vulkan::Context& vk, const Prepared& p, trueno::vulkan::Recorder& rec, int times) {
  const auto& pl = pipeline(k, vk, p);
  std::vector<const trueno::vulkan::Buffer*> bound;
  for (const auto& b : p.vulkan) bound.push_back(b.get());
  for (int t = 0; t < times; ++t) rec.dispatch_buffers(pl, bound, p.push.data(), p.push.size(), k.grid_x, k.grid_y);
}

inline void launch_cuda(const Case& k, trueno::cuda::Context& cuda, Prepared& p) {
  trueno::cuda::launch(cuda, cuda.function(k.module.c_str(), k.kernel.c_str()), k.grid_x, k.grid_y, k.block, 1, p.cuda_params.data());
}

}  // namespace decy::cases
#endif
