// CUDA decode kernels on the device, next to the yardstick measured in the same run: the read-only
// stream (kernels/bench_read.cu) and the device-to-device copy. Weights rotate through 256 MiB of
// copies, so no call finds its matrix in the L2 (60 MB on the H200). Times from CUDA events around 20
// launches that run back to back (queued behind a spin kernel). Without a CUDA device every benchmark reports "skipped: no CUDA device".
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "cuda/nvrtc.h"
#include "trueno/cuda/context.h"
#include "trueno/cuda/ops/convert.h"
#include "trueno/cuda/ops/gemv.h"
#include "trueno/cuda/ops/layer.h"
#include "trueno/cuda/ops/prefill.h"
#include "trueno/quant.h"

namespace trueno::cuda {
namespace {

// The benchmarks' context on device 0 (opened on first use, kept for the process).
Context& bench_context() {
  static const std::shared_ptr<Context> c = Context::open(0);
  return *c;
}


constexpr int kLaunches = 20;
constexpr std::size_t kRotateBytes = std::size_t{256} << 20;

bool device_or_skip(benchmark::State& state) {
  std::string why;
  if (probe(0, &why)) return true;
  state.SkipWithError(("skipped: no CUDA device: " + why).c_str());
  return false;
}

// Milliseconds of GPU time for one call of fn: the mean of kLaunches calls queued behind a 1 ms spin
// kernel, so they run back to back whatever the host's launch rate (~6 us per launch in the VM).
template <class Fn>
double gpu_ms(Context& c, Fn&& fn) {
  static api::CUfunction spin = c.function("bench_read", "bench_spin");
  unsigned long long ns = 1000000;
  void* spin_params[] = {&ns};
  launch(c, spin, 1, 1, 1, 1, spin_params);
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

// Reads state.range(0) bytes, rotating through 256 MiB (1 GiB: one buffer) like the GEMV benchmark.
void BM_CudaReadBandwidth(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t copies = std::max<std::size_t>(1, kRotateBytes / bytes);
  DeviceBuffer buf(bench_context(), copies * bytes), out(bench_context(), 4 * 4096);
  check(c.driver().memset_d8_async(buf.ptr(), 1, copies * bytes, c.stream()), "cuMemsetD8Async");
  api::CUfunction f = c.function("bench_read", "bench_read");
  api::CUdeviceptr p = 0, o = out.ptr();
  unsigned long long n = bytes / 16;
  unsigned never = 0x12345678u;
  void* params[] = {&p, &n, &never, &o};
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(c.info().sms) * 8, (n + 255) / 256));
  for (auto _ : state)
    state.SetIterationTime(gpu_ms(c, [&](int i) {
                             p = buf.ptr() + (i % copies) * bytes;
                             launch(c, f, grid, 1, 256, 1, params);
                           }) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaReadBandwidth)->Arg(9437184)->Arg(33030144)->Arg(73728000)->Arg(142606336)->Arg(1 << 30)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The one-pass decode attention's reads (bench_read_rows) over one 7B layer's K at 16,384 positions (32
// heads x 128 bytes per position, 64 MiB, rotating through 256 MiB): arg 0 in the copy's layout
// [positions][heads x 128], arg 1 head-major [heads][positions][128].
void BM_CudaReadRows(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  constexpr unsigned kHeads = 32, kPositions = 16384;
  const std::size_t bytes = std::size_t{kHeads} * kPositions * 128, copies = kRotateBytes / bytes;
  DeviceBuffer buf(bench_context(), copies * bytes), out(bench_context(), 4 * 4096);
  check(c.driver().memset_d8_async(buf.ptr(), 1, copies * bytes, c.stream()), "cuMemsetD8Async");
  api::CUfunction f = c.function("bench_read", "bench_read_rows");
  api::CUdeviceptr p = 0, o = out.ptr();
  const bool head_major = state.range(0) == 1;
  unsigned long long head_stride = head_major ? std::size_t{kPositions} * 8 : 8;
  unsigned row_stride = head_major ? 8 : kHeads * 8, never = 0x12345678u;
  void* params[] = {&p, &head_stride, &row_stride, &never, &o};
  for (auto _ : state)
    state.SetIterationTime(gpu_ms(c, [&](int i) {
                             p = buf.ptr() + (i % copies) * bytes;
                             launch(c, f, kHeads, kPositions / 256, 256, 1, params);
                           }) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaReadRows)->Arg(0)->Arg(1)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The Q4_K decode GEMV's loads without its arithmetic (bench_read_gemv): rows x 4096 columns of 144-byte
// blocks (4096: a 7B's q, 11008: its gate, 22016: gate and up as one launch), arg 0 the layout (0 the
// file's row-major, 1 block-major, 2 row-major read as 512-byte runs), against bench_read of the same
// bytes (arg 0 = 3). What the GEMV's body could stream if its arithmetic cost nothing.
void BM_CudaReadGemv(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const int layout = static_cast<int>(state.range(0)), rows = static_cast<int>(state.range(1)), nb = 16;
  const std::size_t bytes = static_cast<std::size_t>(rows) * nb * 144, copies = std::max<std::size_t>(2, kRotateBytes / bytes);
  DeviceBuffer buf(bench_context(), copies * bytes), out(bench_context(), 4 * 65536);
  check(c.driver().memset_d8_async(buf.ptr(), 1, copies * bytes, c.stream()), "cuMemsetD8Async");
  api::CUfunction f = c.function("bench_read", layout == 3 ? "bench_read" : "bench_read_gemv");
  api::CUdeviceptr p = 0, o = out.ptr();
  int rows_ = rows, nb_ = nb, layout_ = layout;
  unsigned long long n = bytes / 16;
  unsigned never = 0x12345678u;
  void* gemv_params[] = {&p, &rows_, &nb_, &layout_, &never, &o};
  void* read_params[] = {&p, &n, &never, &o};
  const unsigned read_grid = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(c.info().sms) * 8, (n + 255) / 256));
  for (auto _ : state)
    state.SetIterationTime(gpu_ms(c, [&](int i) {
                             p = buf.ptr() + (i % copies) * bytes;
                             if (layout == 3) launch(c, f, read_grid, 1, 256, 1, read_params);
                             else launch(c, f, static_cast<unsigned>((rows + 7) / 8), 1, 32, 2, gemv_params);
                           }) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaReadGemv)->ArgsProduct({{0, 1, 2, 3}, {4096, 11008, 22016}})->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_CudaCopyBandwidth(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer a(bench_context(), bytes), b(bench_context(), bytes);
  for (auto _ : state)
    state.SetIterationTime(gpu_ms(c, [&](int) { check(c.driver().memcpy_dtod_async(b.ptr(), a.ptr(), bytes, c.stream()), "cuMemcpyDtoDAsync"); }) / 1e3);
  // Bytes read plus bytes written, as the usual "copy bandwidth".
  state.counters["GB/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CudaCopyBandwidth)->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_CudaGemvQ4K(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
  const std::size_t rb = quant_row_bytes(QuantType::Q4_K, cols), mat = rows * rb;
  // Random Q4_K blocks (random levels and packed scales, f16 d and dmin in a sane range): quantizing
  // hundreds of millions of floats would take minutes, and the kernel's speed does not depend on values.
  std::mt19937 rng(7);
  std::vector<std::byte> w(mat);
  for (std::size_t i = 0; i < mat; i += 4) {
    const std::uint32_t v = static_cast<std::uint32_t>(rng());
    std::memcpy(w.data() + i, &v, std::min<std::size_t>(4, mat - i));
  }
  std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
  for (std::size_t b = 0; b < mat / 144; ++b) {
    const std::uint16_t d = detail::f32_to_f16_bits(scale(rng)), dmin = detail::f32_to_f16_bits(scale(rng));
    std::memcpy(w.data() + b * 144, &d, 2);
    std::memcpy(w.data() + b * 144 + 2, &dmin, 2);
  }
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(cols);
  for (float& v : x) v = dist(rng);
  const std::size_t copies = std::max<std::size_t>(2, kRotateBytes / mat);
  DeviceBuffer dw(bench_context(), copies * mat), dx(bench_context(), cols * 4), dy(bench_context(), rows * 4);
  for (std::size_t i = 0; i < copies; ++i) dw.upload(w.data(), mat, i * mat);
  dx.upload(x.data(), cols * 4);
  Q8Activations q(bench_context(), cols);
  quantize_q8_k(c, dx.ptr(), q);
  gemv_q4_k(c, dw.ptr(), rows, cols, q, dy.ptr());  // untimed: the module's first use compiles it (cold cubin cache)
  c.synchronize();
  for (auto _ : state) {
    state.SetIterationTime(gpu_ms(c, [&](int i) { gemv_q4_k(c, dw.ptr() + (i % copies) * mat, rows, cols, q, dy.ptr()); }) / 1e3);
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(mat), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::to_string(copies) + " copies rotated");
}
// The 7B's matrices (and 4096 x 11008, its down), then the 1.1B's: q, k + v as one, gate + up as one, down
BENCHMARK(BM_CudaGemvQ4K)->Args({4096, 4096})->Args({11008, 4096})->Args({22016, 4096})->Args({14336, 4096})->Args({4096, 14336})->Args({32000, 4096})
    ->Args({4096, 11008})->Args({2048, 2048})->Args({512, 2048})->Args({11264, 2048})->Args({2048, 5632})
    ->Iterations(200)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The causal prefill attention of one layer of a 7B model (32 heads of 128, no GQA): T tokens after pos0
// cached positions, flash kernel (arg 2 = 0) or the cuBLAS products around a softmax (1). FLOP/s count
// the products the causal mask leaves (2 per multiply-add, both products).
void BM_CudaAttentionPrefill(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const int T = static_cast<int>(state.range(0)), pos0 = static_cast<int>(state.range(1)), n_head = 32, hd = 128, kv_row = n_head * hd;
  const PrefillAttention how = state.range(2) == 0 ? PrefillAttention::Flash : PrefillAttention::Cublas;
  std::string why;
  if (how == PrefillAttention::Cublas && cublas(&why) == nullptr) return state.SkipWithError(("skipped: " + why).c_str());
  const std::size_t n_keys = static_cast<std::size_t>(pos0) + T;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto random_f16 = [&](std::size_t n) {
    std::vector<std::uint16_t> v(n);
    for (auto& h : v) h = detail::f32_to_f16_bits(dist(rng));
    return v;
  };
  const auto q = random_f16(static_cast<std::size_t>(T) * kv_row), k = random_f16(n_keys * kv_row), v = random_f16(n_keys * kv_row);
  DeviceBuffer dq(c, q.size() * 2), dk(c, k.size() * 2), dv(c, v.size() * 2), out(c, q.size() * 4);
  dq.upload(q.data(), q.size() * 2), dk.upload(k.data(), k.size() * 2), dv.upload(v.data(), v.size() * 2);
  PrefillAttentionScratch scratch;
  const auto call = [&](int) { attention_prefill(c, dq.ptr(), dk.ptr(), dv.ptr(), out.ptr(), T, pos0, scratch, n_head, hd, 1, kv_row, how); };
  call(0);  // untimed: compiles the module, grows the scratch
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, call) / 1e3);
  // Pairs (t, j <= pos0 + t): T pos0 + T (T + 1) / 2; each is hd multiply-adds in each product.
  const double pairs = static_cast<double>(T) * pos0 + static_cast<double>(T) * (T + 1) / 2.0;
  state.counters["TFLOP/s"] = benchmark::Counter(pairs * n_head * hd * 4.0 / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(how == PrefillAttention::Flash ? "flash" : "cublas");
}
BENCHMARK(BM_CudaAttentionPrefill)->Args({512, 0, 0})->Args({512, 0, 1})->Args({2048, 0, 0})->Args({2048, 0, 1})
    ->Args({2048, 14336, 0})->Args({512, 15872, 1})->Args({2048, 30720, 0})
    ->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

// The decode attention of one layer over the 8-bit KV copy (attention_decode_q8) at `positions` cached
// positions: arg 1 the kernel (0 the split over the copy and its combine, 1 the one pass and its combine),
// arg 2 the model's heads (0 a 7B's 32 heads of 128, 1 a 1.1B's 32 q heads on 4 KV heads of 64). GB/s
// count the copy's bytes the layer reads (K and V, 34 bytes per 32 values); BM_CudaReadBandwidth of the
// same bytes (142,606,336 for the 7B at 16,384) is the yardstick. The copy's values do not change the
// kernels' speed: a constant byte and a constant f16 scale (0x2c2c, 0.0652); layers rotate through 256 MiB.
void BM_CudaAttentionDecodeQ8(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const int positions = static_cast<int>(state.range(0)), n_head = 32, n_kv = state.range(2) == 0 ? 32 : 4, hd = state.range(2) == 0 ? 128 : 64;
  const Q8Passes passes = state.range(1) == 0 ? Q8Passes::Split : Q8Passes::One;
  const int kv_row = n_kv * hd, group = n_head / n_kv;
  const std::size_t layer_bytes = static_cast<std::size_t>(positions) * kv_row * 2 * 34 / 32;
  const int n_layer = static_cast<int>(std::max<std::size_t>(2, (kRotateBytes + layer_bytes - 1) / layer_bytes));
  KvCopyQ8 copy(c, n_layer, positions, kv_row);
  check(c.driver().memset_d8_async(copy.k.ptr(), 3, copy.k.bytes(), c.stream()), "cuMemsetD8Async");
  check(c.driver().memset_d8_async(copy.v.ptr(), 5, copy.v.bytes(), c.stream()), "cuMemsetD8Async");
  check(c.driver().memset_d8_async(copy.kd.ptr(), 0x2c, copy.kd.bytes(), c.stream()), "cuMemsetD8Async");
  check(c.driver().memset_d8_async(copy.vd.ptr(), 0x2c, copy.vd.bytes(), c.stream()), "cuMemsetD8Async");
  std::mt19937 rng(13);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(static_cast<std::size_t>(n_head) * hd);
  for (float& v : q) v = dist(rng);
  const int last = positions - 1;
  DeviceBuffer dq(c, q.size() * 4), dpos(c, 4), out(c, q.size() * 4);
  dq.upload(q.data(), q.size() * 4), dpos.upload(&last, 4);
  AttentionScratch scratch(c, positions, n_head, hd);
  const auto call = [&](int i) {
    attention_decode_q8(c, dq.ptr(), copy, i % n_layer, out.ptr(), dpos.ptr(), scratch, n_head, hd, group, positions, passes);
  };
  call(0);  // untimed: compiles the module
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, call) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(layer_bytes), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(passes == Q8Passes::Split ? "split" : "one pass") + ", " + std::to_string(n_layer) + " layers rotated");
}
BENCHMARK(BM_CudaAttentionDecodeQ8)->ArgsProduct({{512, 4096, 16384, 32768}, {0, 1}, {0}})->Args({16384, 0, 1})->Args({16384, 1, 1})
    ->Iterations(20)->UseManualTime()->Unit(benchmark::kMicrosecond);

// gemv() of Q8_0 (arg 0; 2: its rows split) and Q6_K (1; 3: its planes) matrices (Q4_K above): random bytes (the kernels' speed does not depend on the
// values), rotated through 256 MiB of copies like the Q4_K benchmark.
void BM_CudaGemv(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const QuantType type = state.range(0) % 2 == 1 ? QuantType::Q6_K : QuantType::Q8_0;
  const WeightLayout layout = state.range(0) >= 2 ? WeightLayout::Split : WeightLayout::File;
  const auto rows = static_cast<std::size_t>(state.range(1)), cols = static_cast<std::size_t>(state.range(2));
  const std::size_t mat = rows * quant_row_bytes(type, cols), copies = std::max<std::size_t>(2, kRotateBytes / mat);
  std::mt19937 rng(9);
  std::vector<std::uint8_t> w(mat);
  for (auto& b : w) b = static_cast<std::uint8_t>(rng());
  std::vector<float> x(cols, 0.5f);
  DeviceBuffer dw(c, copies * mat), dx(c, cols * 4), dy(c, rows * 4);
  for (std::size_t i = 0; i < copies; ++i) dw.upload(w.data(), mat, i * mat);
  dx.upload(x.data(), cols * 4);
  Q8Activations q(c, cols);
  quantize_q8_k(c, dx.ptr(), q);
  const auto call = [&](int i) { gemv(c, type, dw.ptr() + (i % copies) * mat, rows, cols, dx.ptr(), &q, dy.ptr(), false, false, layout); };
  call(0);  // untimed: compiles the module
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, call) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(mat), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(quant_info(type).name) + (layout == WeightLayout::Split ? " split" : "") + ", " + std::to_string(copies) +
                " copies rotated");
}
BENCHMARK(BM_CudaGemv)->Args({0, 4096, 4096})->Args({0, 11008, 4096})->Args({0, 4096, 11008})->Args({2, 4096, 4096})
    ->Args({2, 11008, 4096})->Args({2, 4096, 11008})->Args({1, 4096, 14336})->Args({3, 4096, 4096})->Args({3, 4096, 11008})
    ->Args({3, 32000, 4096})
    ->Iterations(100)->UseManualTime()->Unit(benchmark::kMicrosecond);

// A quantized matrix -> f16 rows (the prefill GEMMs' operand, Note [Batched prefill] in realizar): bytes
// read plus bytes written per second. Random blocks: the kernel's speed does not depend on the values.
void BM_CudaDequantF16(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const QuantType type = state.range(0) == 0 ? QuantType::Q4_K : QuantType::Q6_K;
  const std::size_t rows = 14336, cols = 4096, rb = quant_row_bytes(type, cols), mat = rows * rb;
  std::mt19937 rng(5);
  std::vector<std::uint8_t> w(mat);
  for (auto& b : w) b = static_cast<std::uint8_t>(rng());
  DeviceBuffer dw(c, mat), out(c, rows * cols * 2);
  dw.upload(w.data(), mat);
  dequantize_f16(c, type, dw.ptr(), rows, cols, out.ptr());  // untimed: compiles the module
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, [&](int) { dequantize_f16(c, type, dw.ptr(), rows, cols, out.ptr()); }) / 1e3);
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(mat + rows * cols * 2), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(quant_info(type).name) + " 14336 x 4096");
}
BENCHMARK(BM_CudaDequantF16)->Arg(0)->Arg(1)->Iterations(10)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The CUDA originals of the Vulkan modules decy builds (BM_VulkanShadersFromCuda, src/vulkan/vulkan_bench.cpp):
// the same ops and sizes, for issue 17's speed table. Args: op (0 swiglu, 1 add_inplace, 2 kv_append of one
// row, 3 add_rows over 512 rows of n), n. GB/s as there (12 bytes per value; 8 for add_rows).
void BM_CudaShadersOfDecy(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const int op = static_cast<int>(state.range(0));
  const auto n = static_cast<std::size_t>(state.range(1));
  constexpr std::size_t kRows = 512;
  const std::size_t values = op == 3 ? kRows * n : n;
  std::vector<float> halves(values, 0.5f);
  DeviceBuffer a(c, values * 4), b(c, n * 4), kc(c, op == 2 ? 8 * n * 2 : 16), vc(c, op == 2 ? 8 * n * 2 : 16), pos(c, 4);
  const int three = 3;
  a.upload(halves.data(), values * 4), b.upload(halves.data(), n * 4), pos.upload(&three, 4);
  const auto run = [&](int) {
    if (op == 0) swiglu(c, a.ptr(), b.ptr(), n);
    if (op == 1) add_inplace(c, a.ptr(), b.ptr(), n);
    if (op == 2) kv_append(c, a.ptr(), b.ptr(), kc.ptr(), vc.ptr(), pos.ptr(), static_cast<int>(n));
    if (op == 3) add_rows(c, a.ptr(), b.ptr(), kRows, n);
  };
  run(0);  // untimed: compiles the module
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, run) / 1e3);
  state.counters["GB/s"] = benchmark::Counter((op == 3 ? 8.0 : 12.0) * static_cast<double>(values), benchmark::Counter::kIsIterationInvariantRate);
}
void shaders_of_decy_args(benchmark::internal::Benchmark* b) {
  for (int op : {0, 1})
    for (long n : {4096L, 14336L, 512L * 14336, 16L << 20}) b->Args({op, n});
  for (long n : {1024L, 4096L, 1L << 20}) b->Args({2, n});
  for (long n : {1024L, 4096L}) b->Args({3, n});
}
BENCHMARK(BM_CudaShadersOfDecy)->Apply(shaders_of_decy_args)->Iterations(10)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Note [A persistent GEMV chain] (kernels/gemv_k45.cu): the GEMVs of a 7B decode token (32 layers of
// q, k, v / wo / gate, up / down, all Q4_K here: 3.6 GB, more than the L2 holds) as 128 launches
// (arg 0: gemv_multi, overlapped as in decode) or in one persistent kernel with a grid barrier between
// phases (1) or none (2); 3 and 4 as 1 and 2 with every phase split evenly over the warps and the
// weights through a ring in shared memory that runs ahead across phases. Activations stay constant: the
// small steps between the GEMVs are left out. The persistent grid is as many blocks as the occupancy API
// says fit at once, which the barriers need: run it on an otherwise idle GPU.
void BM_CudaGemvChain(benchmark::State& state) {
  if (!device_or_skip(state)) return;
  Context& c = bench_context();
  const int mode = static_cast<int>(state.range(0));
  // the kernels' block shape (TRUENO_GEMV_WARPS warps of TRUENO_GEMV_ROWS rows, as ops/gemv.cpp reads it)
  const int warps = tuning_define("TRUENO_GEMV_WARPS", 2), rows_per_block = warps * tuning_define("TRUENO_GEMV_ROWS", 4);
  const std::size_t d = 4096, f = 11008, layers = 32;
  const std::size_t sq = quant_row_bytes(QuantType::Q4_K, d) * d, sg = quant_row_bytes(QuantType::Q4_K, d) * f,
                    sd = quant_row_bytes(QuantType::Q4_K, f) * d;
  const std::size_t per_layer = 4 * sq + 2 * sg + sd;
  DeviceBuffer w(c, per_layer * layers);
  check(c.driver().memset_d8_async(w.ptr(), 0x11, per_layer * layers, c.stream()), "memset");
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xd(d), xf(f);
  for (auto& v : xd) v = u(rng);
  for (auto& v : xf) v = u(rng);
  DeviceBuffer bxd(c, d * 4), bxf(c, f * 4), y(c, 8 * f * 4);
  bxd.upload(xd.data(), d * 4), bxf.upload(xf.data(), f * 4);
  Q8Activations qd(c, d), qf(c, f);
  quantize_q8_k(c, bxd.ptr(), qd), quantize_q8_k(c, bxf.ptr(), qf);
  struct Op {
    api::CUdeviceptr w[3], y[3];
    int rows[3];
    api::CUdeviceptr xq, xd, xbs;
    int nb, accumulate, grid_x, ny;
  };
  static_assert(sizeof(Op) == 104);
  std::vector<Op> ops;
  const auto yp = [&](int i) { return y.ptr() + static_cast<api::CUdeviceptr>(i) * f * 4; };
  for (std::size_t l = 0; l < layers; ++l) {
    const api::CUdeviceptr b = w.ptr() + l * per_layer;
    const auto op = [&](std::initializer_list<api::CUdeviceptr> ws, int rows, const Q8Activations& x, int acc) {
      Op o{};
      int i = 0;
      for (api::CUdeviceptr p : ws) o.w[i] = p, o.y[i] = yp(i), o.rows[i] = rows, ++i;
      o.xq = x.q.ptr(), o.xd = x.d.ptr(), o.xbs = x.bsums.ptr(), o.nb = static_cast<int>(x.n / 256), o.accumulate = acc;
      o.grid_x = (rows + rows_per_block - 1) / rows_per_block, o.ny = i;
      ops.push_back(o);
    };
    op({b, b + sq, b + 2 * sq}, static_cast<int>(d), qd, 0);
    op({b + 3 * sq}, static_cast<int>(d), qd, 1);
    op({b + 4 * sq, b + 4 * sq + sg}, static_cast<int>(f), qd, 0);
    op({b + 4 * sq + 2 * sg}, static_cast<int>(d), qf, 1);
  }
  DeviceBuffer dops(c, ops.size() * sizeof(Op)), counters(c, ops.size() * 4);
  dops.upload(ops.data(), ops.size() * sizeof(Op));
  api::CUfunction chain = c.function("gemv_k45", mode >= 3 ? "bench_gemv_chain_ring" : "bench_gemv_chain");
  int per_sm = 0;
  check(c.driver().occupancy_max_blocks(&per_sm, chain, 32 * warps, 0), "occupancy");
  const unsigned grid = static_cast<unsigned>(per_sm * c.info().sms);
  const auto token = [&](int) {
    if (mode == 0) {
      for (const Op& o : ops) {
        GemvTarget t[3];
        for (int i = 0; i < o.ny; ++i) t[i] = {o.w[i], static_cast<std::size_t>(o.rows[i]), o.y[i]};
        const Q8Activations& x = o.nb == static_cast<int>(d / 256) ? qd : qf;
        gemv_multi(c, QuantType::Q4_K, std::span(t, static_cast<std::size_t>(o.ny)), x.n, 0, &x, false, o.accumulate != 0);
      }
      return;
    }
    check(c.driver().memset_d8_async(counters.ptr(), 0, ops.size() * 4, c.stream()), "memset");
    api::CUdeviceptr po = dops.ptr(), pc = counters.ptr();
    int n = static_cast<int>(ops.size()), barriers = mode == 1 || mode == 3 ? 1 : 0;
    void* params[] = {&po, &n, &pc, &barriers};
    launch(c, chain, grid, 1, 32, static_cast<unsigned>(warps), params);
  };
  token(0);
  c.synchronize();
  for (auto _ : state) state.SetIterationTime(gpu_ms(c, token) / 1e3);
  const double bytes = static_cast<double>(per_layer * layers);
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["blocks_per_sm"] = per_sm;
}
BENCHMARK(BM_CudaGemvChain)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->Arg(4)->Iterations(5)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trueno::cuda
