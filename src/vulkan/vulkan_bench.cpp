// Vulkan decode shaders on the device, next to the yardstick measured in the same run (a buffer copy):
// GEMV of the 7B shapes in every weight type gemv_rows / gemv take, and the cost of one dispatch with its
// barrier (what a decode step of ~450 dispatches pays besides the bytes). Each measurement replays one
// recorded command buffer of kDispatches dispatches (submit + wait, wall clock); weights rotate through
// 256 MiB of copies, so no dispatch finds its matrix in the L2. Also swiglu and add through the shaders
// decy built from the CUDA kernels against the hand-written ones. Without a Vulkan device (or on a CPU
// device such as lavapipe, where these numbers mean nothing) every benchmark says "skipped: ...".
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "trueno/quant.h"
#include "trueno/vulkan/context.h"
#include "trueno/vulkan/ops.h"

namespace trueno::vulkan {
namespace {

constexpr int kDispatches = 100;
constexpr std::size_t kRotateBytes = std::size_t{256} << 20;

Context* bench_context(benchmark::State& state) {
  static std::string why;
  static const std::shared_ptr<Context> c = [] {
    auto info = probe(0, &why);
    if (!info) return std::shared_ptr<Context>();
    if (info->cpu) {
      why = "vulkan:0 is a CPU device (" + info->name + ")";
      return std::shared_ptr<Context>();
    }
    return Context::open(0);
  }();
  if (!c) state.SkipWithError(("skipped: no Vulkan GPU: " + why).c_str());
  return c.get();
}

// Seconds per dispatch of a sealed recording of kDispatches dispatches.
double per_dispatch(Recorder& r) {
  r.replay();  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  r.replay();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kDispatches;
}

void BM_VulkanCopyBandwidth(benchmark::State& state) {
  Context* c = bench_context(state);
  if (c == nullptr) return;
  const auto bytes = static_cast<std::size_t>(state.range(0));
  Buffer a(*c, bytes), b(*c, bytes);
  Recorder r(*c);
  for (int i = 0; i < kDispatches; ++i) r.copy(a.handle(), b.handle(), bytes);
  r.seal();
  for (auto _ : state) state.SetIterationTime(per_dispatch(r));
  state.counters["GB/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_VulkanCopyBandwidth)->Arg(64 << 20)->Arg(512 << 20)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Args: weight type (GGUF id), rows, cols, barrier after each dispatch (1) or none (0).
void BM_VulkanGemv(benchmark::State& state) {
  Context* c = bench_context(state);
  if (c == nullptr) return;
  const auto type = static_cast<QuantType>(state.range(0));
  const auto rows = static_cast<std::size_t>(state.range(1)), cols = static_cast<std::size_t>(state.range(2));
  const std::size_t bytes = rows * quant_row_bytes(type, cols), copies = std::max<std::size_t>(1, kRotateBytes / bytes);
  std::vector<std::uint8_t> w(bytes);
  std::mt19937 rng(1);
  for (auto& v : w) v = static_cast<std::uint8_t>(rng() & 0x3b);  // small f16 scales: no inf/NaN
  std::vector<Buffer> ws;
  for (std::size_t i = 0; i < copies; ++i) ws.emplace_back(*c, bytes), ws.back().upload(w.data(), bytes);
  std::vector<float> xv(cols, 0.01f);
  Buffer x(*c, cols * 4), y(*c, rows * 4);
  x.upload(xv.data(), cols * 4);
  Recorder r(*c);
  if (state.range(3) == 0) r.begin_concurrent();
  for (int i = 0; i < kDispatches; ++i) gemv(r, type, ws[static_cast<std::size_t>(i) % copies], rows, cols, x, 1, y);
  r.seal();
  for (auto _ : state) state.SetIterationTime(per_dispatch(r));
  state.SetLabel(std::string(quant_info(type).name) + (gemv_by_subgroup(*c, type, cols) ? " gemv_rows" : " gemv"));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
void gemv_args(benchmark::internal::Benchmark* b) {
  for (QuantType t : {QuantType::Q4_K, QuantType::Q6_K, QuantType::Q8_0, QuantType::F16, QuantType::Q5_K, QuantType::Q4_0})
    for (auto [rows, cols] : {std::pair{4096, 4096}, std::pair{11008, 4096}, std::pair{4096, 11008}, std::pair{32000, 4096}})
      for (int barrier : {1, 0}) b->Args({static_cast<long>(t), rows, cols, barrier});
}
BENCHMARK(BM_VulkanGemv)->Apply(gemv_args)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The prefill GEMM (Note [Vulkan prefill GEMM]) at 512 tokens: Args: weight type, rows, cols, tensor cores
// (1, where the device has them) or the f32 tiles (0). Reports TFLOP/s (2 x rows x cols x 512 per dispatch).
void BM_VulkanGemm(benchmark::State& state) {
  Context* c = bench_context(state);
  if (c == nullptr) return;
  const auto type = static_cast<QuantType>(state.range(0));
  const auto rows = static_cast<std::size_t>(state.range(1)), cols = static_cast<std::size_t>(state.range(2));
  const std::size_t T = 512, bytes = rows * quant_row_bytes(type, cols);
  const bool coopmat = c->coopmat_gemm();
  c->set_coopmat_gemm(state.range(3) != 0);
  if (state.range(3) != 0 && !gemm_on_tensor_cores(*c)) {
    c->set_coopmat_gemm(coopmat);
    state.SkipWithError("skipped: no NV cooperative matrices on this device");
    return;
  }
  std::vector<std::uint8_t> w(bytes);
  std::mt19937 rng(1);
  for (auto& v : w) v = static_cast<std::uint8_t>(rng() & 0x3b);
  Buffer wb(*c, bytes), x(*c, T * cols * 4), y(*c, T * rows * 4);
  wb.upload(w.data(), bytes);
  std::vector<float> xv(T * cols, 0.01f);
  x.upload(xv.data(), xv.size() * 4);
  Recorder r(*c);
  for (int i = 0; i < kDispatches / 10; ++i) gemm(r, type, wb, rows, cols, x, T, y);
  r.seal();
  c->set_coopmat_gemm(coopmat);
  for (auto _ : state) state.SetIterationTime(per_dispatch(r) * 10);
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(rows * cols * T) / 1e12, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_VulkanGemm)->Args({12, 4096, 4096, 1})->Args({12, 11008, 4096, 1})->Args({14, 4096, 11008, 1})->Args({12, 4096, 4096, 0})
    ->Iterations(3)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The ops whose module decy builds from the CUDA kernel, through it and through the hand-written shader
// (Note [Vulkan shaders from CUDA], ops.cpp; issue 17 asks the decy module to be within 10% of the
// hand-written one). Args: op (0 swiglu, 1 add_inplace, 2 kv_append of one row, 3 add_bias over 512 rows
// of n), n, decy module (1) or hand-written (0). Each as the backend dispatches it (the decy module in
// workgroups of 256 on a 1-D grid, add_rows a row per workgroup row; the hand-written one in 64 on a 2-D
// grid, kv_append's a pair of values per invocation); GB/s counts the 12 bytes per value read and written
// (8 for add_bias).
void BM_VulkanShadersFromCuda(benchmark::State& state) {
  Context* c = bench_context(state);
  if (c == nullptr) return;
  const int op = static_cast<int>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  const bool decy = state.range(2) != 0, was = c->decy_shaders();
  c->set_decy_shaders(decy);
  constexpr std::size_t kBiasRows = 512;
  const std::string module = op == 0   ? swiglu_module(*c, n)
                             : op == 1 ? add_inplace_module(*c, n)
                             : op == 2 ? kv_append_module(*c, n, 1)
                                       : add_bias_module(*c, kBiasRows, n);
  if (decy != module.ends_with("_decy")) {
    c->set_decy_shaders(was);
    state.SkipWithError(("skipped: no module built from CUDA through decy runs " + std::to_string(n) + " values here (" + module + ")").c_str());
    return;
  }
  constexpr int kSlots = 8;  // kv_append's cache: the recording appends at slot 3 of 8
  const int pos = 3;
  const std::size_t values = op == 3 ? kBiasRows * n : n, cache_bytes = op == 2 ? kSlots * n * 2 : 4;  // values: a's
  std::vector<float> halves(values, 0.5f);
  Buffer a(*c, values * 4), b(*c, n * 4), kc(*c, cache_bytes), vc(*c, cache_bytes), p(*c, 4);
  a.upload(halves.data(), values * 4), b.upload(halves.data(), n * 4), p.upload(&pos, 4);
  Recorder r(*c);
  for (int i = 0; i < kDispatches; ++i) {
    if (op == 0) swiglu(r, a, b, n);
    if (op == 1) add_inplace(r, a, b, n);
    if (op == 2) kv_append(r, a, b, kc, vc, p, n);
    if (op == 3) add_bias(r, a, b, kBiasRows, n);
  }
  r.seal();
  c->set_decy_shaders(was);
  for (auto _ : state) state.SetIterationTime(per_dispatch(r));
  state.SetLabel(module);
  state.counters["GB/s"] = benchmark::Counter((op == 3 ? 8.0 : 12.0) * static_cast<double>(values), benchmark::Counter::kIsIterationInvariantRate);
}
void shaders_from_cuda_args(benchmark::internal::Benchmark* b) {
  for (int op : {0, 1})
    for (long n : {4096L, 14336L, 512L * 14336, 16L << 20})
      for (int decy : {1, 0}) b->Args({op, n, decy});
  for (long n : {1024L, 4096L, 1L << 20})  // one token's keys of 8 KV heads of 128 values, and larger
    for (int decy : {1, 0}) b->Args({2, n, decy});
  for (long n : {1024L, 4096L})  // a prompt's k and q biases
    for (int decy : {1, 0}) b->Args({3, n, decy});
}
BENCHMARK(BM_VulkanShadersFromCuda)->Apply(shaders_from_cuda_args)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);

// One small dispatch (add of 256 floats) and its barrier: the fixed cost per dispatch of a decode step.
void BM_VulkanDispatchWithBarrier(benchmark::State& state) {
  Context* c = bench_context(state);
  if (c == nullptr) return;
  Buffer a(*c, 1024), b(*c, 1024);
  Recorder r(*c);
  if (state.range(0) == 0) r.begin_concurrent();
  for (int i = 0; i < kDispatches; ++i) add_inplace(r, a, b, 256);
  r.seal();
  for (auto _ : state) state.SetIterationTime(per_dispatch(r));
}
BENCHMARK(BM_VulkanDispatchWithBarrier)->Arg(1)->Arg(0)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trueno::vulkan
