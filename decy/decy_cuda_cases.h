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

// A buffer: element type, count, contents (normal(scale), zeros, or integers in [lo, hi]), compared or not.
struct Buf {
  Elem elem = Elem::F32;
  std::size_t count = 0;
  enum class Init { Normal, Zero, Ints, Steps } init = Init::Normal;  // Steps: lo + i x hi
  float scale = 1.0f;
  std::int64_t lo = 0, hi = 0;
  bool out = false;
};
inline Buf in_f32(std::size_t n, float scale = 1.0f) { return {Elem::F32, n, Buf::Init::Normal, scale}; }
inline Buf out_f32(std::size_t n) { return {Elem::F32, n, Buf::Init::Zero, 1.0f, 0, 0, true}; }
inline Buf inout_f32(std::size_t n, float scale = 1.0f) { return {Elem::F32, n, Buf::Init::Normal, scale, 0, 0, true}; }
inline Buf in_f16(std::size_t n, float scale = 1.0f) { return {Elem::F16, n, Buf::Init::Normal, scale}; }
inline Buf in_bf16(std::size_t n, float scale = 1.0f) { return {Elem::BF16, n, Buf::Init::Normal, scale}; }
inline Buf out_of(Elem e, std::size_t n) { return {e, n, Buf::Init::Zero, 1.0f, 0, 0, true}; }
inline Buf ints(std::size_t n, std::int64_t lo, std::int64_t hi) { return {Elem::I32, n, Buf::Init::Ints, 1.0f, lo, hi}; }
inline Buf steps(std::size_t n, std::int64_t first, std::int64_t step) { return {Elem::I32, n, Buf::Init::Steps, 1.0f, first, step}; }

// A parameter: buffer `index`, or a scalar of type `elem` (F32 / I32 / U32 / U64).
struct Param {
  int buffer = -1;
  Elem elem = Elem::I32;
  double f = 0;
  std::int64_t i = 0;
};
inline Param B(int index) { return {index}; }
inline Param I32(std::int64_t v) { return {-1, Elem::I32, 0, v}; }
inline Param U32(std::int64_t v) { return {-1, Elem::U32, 0, v}; }
inline Param U64(std::int64_t v) { return {-1, Elem::U64, 0, v}; }
inline Param F32(double v) { return {-1, Elem::F32, v, 0}; }
inline Param F64(double v) { return {-1, Elem::F64, v, 0}; }

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
    for (std::size_t i = 0; i < b.count && b.init != Buf::Init::Zero; ++i) {
      std::byte* at = bytes.data() + i * elem_bytes(b.elem);
      if (b.init == Buf::Init::Ints || b.init == Buf::Init::Steps) {
        const auto v = static_cast<std::int32_t>(b.init == Buf::Init::Ints ? in(rng) : b.lo + static_cast<std::int64_t>(i) * b.hi);
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
    p.ptrs.push_back(p.cuda.back()->ptr());
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
    p.scalars.push_back(bits);
    p.cuda_params.push_back(&p.scalars.back());
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
  for (int t = 0; t < times; ++t) {
    switch (p.vulkan.size()) {  // Recorder::dispatch takes an initializer list of bindings
      case 2: rec.dispatch(pl, {p.vulkan[0].get(), p.vulkan[1].get()}, p.push.data(), p.push.size(), k.grid_x, k.grid_y); break;
      case 3: rec.dispatch(pl, {p.vulkan[0].get(), p.vulkan[1].get(), p.vulkan[2].get()}, p.push.data(), p.push.size(), k.grid_x, k.grid_y); break;
      case 4:
        rec.dispatch(pl, {p.vulkan[0].get(), p.vulkan[1].get(), p.vulkan[2].get(), p.vulkan[3].get()}, p.push.data(), p.push.size(), k.grid_x,
                     k.grid_y);
        break;
      case 5:
        rec.dispatch(pl, {p.vulkan[0].get(), p.vulkan[1].get(), p.vulkan[2].get(), p.vulkan[3].get(), p.vulkan[4].get()}, p.push.data(),
                     p.push.size(), k.grid_x, k.grid_y);
        break;
      default:
        rec.dispatch(pl, {p.vulkan[0].get(), p.vulkan[1].get(), p.vulkan[2].get(), p.vulkan[3].get(), p.vulkan[4].get(), p.vulkan[5].get()},
                     p.push.data(), p.push.size(), k.grid_x, k.grid_y);
        break;
    }
  }
}

inline void launch_cuda(const Case& k, trueno::cuda::Context& cuda, Prepared& p) {
  trueno::cuda::launch(cuda, cuda.function(k.module.c_str(), k.kernel.c_str()), k.grid_x, k.grid_y, k.block, 1, p.cuda_params.data());
}

}  // namespace decy::cases
#endif
