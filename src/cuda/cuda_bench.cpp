// CUDA decode kernels on the device, next to the yardstick measured in the same run: the read-only
// stream (kernels/bench_read.cu) and the device-to-device copy. Weights rotate through 256 MiB of
// copies, so no call finds its matrix in the L2 (60 MB on the H200). Times from CUDA events around 20
// back-to-back launches. Without a CUDA device every benchmark reports "skipped: no CUDA device".
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "cuda/context.h"
#include "cuda/ops/gemv.h"
#include "trueno/quant.h"

namespace trueno::cuda {
namespace {

constexpr int kLaunches = 20;
constexpr std::size_t kRotateBytes = std::size_t{256} << 20;

bool device_or_skip(benchmark::State& state) {
  std::string why;
  if (probe(&why)) return true;
  state.SkipWithError(("skipped: no CUDA device: " + why).c_str());
  return false;
}

// Milliseconds of GPU time for one call of fn (the mean of kLaunches back-to-back calls).
template <class Fn>
double gpu_ms(Context& c, Fn&& fn) {
  api::CUevent a = nullptr, b = nullptr;
  check(c.driver().event_create(&a, api::kEventDefault), "cuEventCreate");
  check(c.driver().event_create(&b, api::kEventDefault), "cuEventCreate");
  check(c.driver().event_record(a, c.stream()), "cuEventRecord");
  for (int i = 0; i < kLaunches; ++i) fn(i);
  check(c.driver().event_record(b, c.stream()), "cuEventRecord");
  check(c.driver().event_synchronize(b), "cuEventSynchronize");
  float ms = 0;
  check(c.driver().event_elapsed(&ms, a, b), "cuEventElapsedTime");
  c.driver().event_destroy(a), c.driver().event_destroy(b);
  return static_cast<double>(ms) / kLaunches;
}

void BM_CudaReadBandwidth(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = Context::get();
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer buf(bytes), out(4 * 4096);
  check(c.driver().memset_d8_async(buf.ptr(), 1, bytes, c.stream()), "cuMemsetD8Async");
  api::CUfunction f = c.function("bench_read", "bench_read");
  api::CUdeviceptr p = buf.ptr(), o = out.ptr();
  unsigned long long n = bytes / 16;
  unsigned never = 0x12345678u;
  void* params[] = {&p, &n, &never, &o};
  const unsigned grid = static_cast<unsigned>(c.info().sms) * 8;
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, [&](int) { launch(c, f, grid, 1, 256, 1, params); }) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaReadBandwidth)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_CudaCopyBandwidth(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = Context::get();
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer a(bytes), b(bytes);
  for (auto _ : state)
    state.SetIterationTime(gpu_ms(c, [&](int) { check(c.driver().memcpy_dtod_async(b.ptr(), a.ptr(), bytes, c.stream()), "cuMemcpyDtoDAsync"); }) / 1e3);
  // Bytes read plus bytes written, as the usual "copy bandwidth".
  state.counters["GB/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaCopyBandwidth)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_CudaGemvQ4K(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = Context::get();
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
  const std::size_t rb = quant_row_bytes(QuantType::Q4_K, cols), mat = rows * rb;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> wf(cols), x(cols);
  std::vector<std::byte> w(mat);
  for (std::size_t r = 0; r < rows; ++r) {
    for (float& v : wf) v = dist(rng);
    quantize(QuantType::Q4_K, wf, std::span(w).subspan(r * rb, rb));
  }
  for (float& v : x) v = dist(rng);
  const std::size_t copies = std::max<std::size_t>(2, kRotateBytes / mat);
  DeviceBuffer dw(copies * mat), dx(cols * 4), dy(rows * 4);
  for (std::size_t i = 0; i < copies; ++i) dw.upload(w.data(), mat, i * mat);
  dx.upload(x.data(), cols * 4);
  Q8Activations q(cols);
  quantize_q8_k(c, dx.ptr(), q);
  for (auto _ : state) {
    state.SetIterationTime(gpu_ms(c, [&](int i) { gemv_q4_k(c, dw.ptr() + (i % copies) * mat, rows, cols, q, dy.ptr()); }) / 1e3);
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(mat), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::to_string(copies) + " copies rotated");
}
BENCHMARK(BM_CudaGemvQ4K)->Args({4096, 4096})->Args({14336, 4096})->Args({4096, 14336})->Args({32000, 4096})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trueno::cuda
