// Fused quantized matvec: effective GB/s (weight bytes read / time) per type and shape, one thread and
// all threads, next to the machine's read bandwidth measured in the same run; prefill GFLOP/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "trueno/quant.h"
#include "trueno/threads.h"

namespace {

using trueno::QuantType;

// Random blocks with sane f16 scales (random bytes there could be NaN or denormal and time differently).
std::vector<std::byte> random_weights(QuantType t, std::size_t rows, std::size_t cols) {
  const auto& info = trueno::quant_info(t);
  std::vector<std::byte> w(rows * trueno::quant_row_bytes(t, cols));
  std::mt19937_64 rng(1);
  for (auto& b : w) b = static_cast<std::byte>(rng());
  const std::uint16_t scale = trueno::detail::f32_to_f16_bits(1e-3f);
  for (std::size_t off = 0; off < w.size(); off += info.block_bytes) {
    std::byte* blk = w.data() + off;
    switch (t) {
      case QuantType::Q4_0: case QuantType::Q8_0: std::memcpy(blk, &scale, 2); break;
      case QuantType::Q4_K: case QuantType::Q5_K: std::memcpy(blk, &scale, 2), std::memcpy(blk + 2, &scale, 2); break;
      case QuantType::Q6_K: std::memcpy(blk + 208, &scale, 2); break;
      case QuantType::F16: case QuantType::BF16: std::memcpy(blk, &scale, 2); break;
      default: break;
    }
  }
  return w;
}

void matvec(benchmark::State& state, QuantType t) {
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  // Copies of the matrix, 256 MiB in all, used in turn: each call reads its weights from memory, as
  // decode does (a model is far larger than the last-level cache), not from a cache that one matrix
  // of 9-33 MB fits in.
  const auto one = random_weights(t, rows, cols);
  const std::size_t copies = std::max<std::size_t>(2, ((std::size_t{256} << 20) + one.size() - 1) / one.size());
  std::vector<std::byte> all(copies * one.size());
  for (std::size_t c = 0; c < copies; ++c) std::memcpy(all.data() + c * one.size(), one.data(), one.size());
  std::vector<float> x(cols, 0.5f), y(rows);
  const int saved = trueno::num_threads();
  trueno::set_num_threads(threads == 0 ? trueno::physical_cores() : threads);
  std::size_t c = 0;
  for (auto _ : state) {
    trueno::quant_matvec(t, std::span<const std::byte>(all.data() + c * one.size(), one.size()), rows, cols, x, y);
    c = c + 1 == copies ? 0 : c + 1;
  }
  trueno::set_num_threads(saved);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * one.size()));
}

// The same with the rows packed 8 at a time (PackedQuantMatrix), where the selected tier packs t. `hot`: one
// copy, read again by every call: each thread's rows stay in its core's caches, so this is the kernel's
// arithmetic rate without memory (what bounds decode when it equals the cold rate: issue 19).
void matvec_packed_copies(benchmark::State& state, QuantType t, bool hot) {
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const auto one = random_weights(t, rows, cols);
  std::vector<trueno::PackedQuantMatrix> packed;
  const std::size_t copies = hot ? 1 : std::max<std::size_t>(2, ((std::size_t{256} << 20) + one.size() - 1) / one.size());
  for (std::size_t c = 0; c < copies; ++c) {
    auto p = trueno::PackedQuantMatrix::pack(t, one, rows, cols);
    if (!p) return state.SkipWithError("this CPU tier does not pack this type");
    packed.push_back(std::move(*p));
  }
  std::vector<float> x(cols, 0.5f), y(rows);
  const int saved = trueno::num_threads();
  trueno::set_num_threads(threads == 0 ? trueno::physical_cores() : threads);
  std::size_t c = 0;
  for (auto _ : state) {
    trueno::quant_matvec(packed[c], x, y);
    c = c + 1 == packed.size() ? 0 : c + 1;
  }
  trueno::set_num_threads(saved);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * one.size()));
}
void matvec_packed(benchmark::State& state, QuantType t) { matvec_packed_copies(state, t, false); }
void matvec_packed_hot(benchmark::State& state, QuantType t) { matvec_packed_copies(state, t, true); }

void prefill(benchmark::State& state, QuantType t) {
  const std::size_t rows = 4096, cols = 4096, m = static_cast<std::size_t>(state.range(0));
  const auto w = random_weights(t, rows, cols);
  std::vector<float> x(m * cols, 0.5f), y(m * rows);
  trueno::set_num_threads(trueno::physical_cores());
  for (auto _ : state) trueno::quant_matmul(t, w, rows, cols, x, m, y);
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * rows * cols * m * static_cast<double>(state.iterations()) * 1e-9,
                                                benchmark::Counter::kIsRate);
}

// Read bandwidth of the machine: all threads summing disjoint parts of a 512 MiB buffer.
void read_bandwidth(benchmark::State& state) {
  const std::size_t words = (std::size_t{512} << 20) / 8;
  std::vector<std::uint64_t> buf(words, 1);
  const int threads = static_cast<int>(state.range(0)) == 0 ? trueno::physical_cores() : 1;
  const int saved = trueno::num_threads();
  trueno::set_num_threads(threads);
  // 4 chunks per thread: tasks are handed out dynamically, so every thread streams about a quarter each.
  const std::size_t chunks = static_cast<std::size_t>(threads) * 4;
  std::vector<std::uint64_t> sums(chunks * 8);
  for (auto _ : state) {
    trueno::parallel_for(chunks, [&](std::size_t t) {
      const std::size_t begin = words / chunks * t, end = t + 1 == chunks ? words : words / chunks * (t + 1);
      std::uint64_t a = 0, b = 0, c = 0, d = 0;
      for (std::size_t i = begin; i + 4 <= end; i += 4) a += buf[i], b += buf[i + 1], c += buf[i + 2], d += buf[i + 3];
      sums[t * 8] = a + b + c + d;
    });
    benchmark::DoNotOptimize(sums.data());
  }
  trueno::set_num_threads(saved);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * words * 8));
}

const int registered = [] {
  benchmark::RegisterBenchmark("read_bandwidth", read_bandwidth)->Arg(1)->Arg(0)->ArgName("threads")->UseRealTime();
  for (QuantType t : {QuantType::Q4_K, QuantType::Q5_K, QuantType::Q6_K, QuantType::Q8_0, QuantType::Q4_0, QuantType::F16}) {
    const std::string name = "quant_matvec/" + std::string(trueno::quant_info(t).name);
    auto* b = benchmark::RegisterBenchmark(name.c_str(), matvec, t);
    for (auto [r, c] : {std::pair<int, int>{4096, 4096}, {11008, 4096}, {4096, 11008}, {4096, 14336}})
      for (int th : {1, 0}) b->Args({r, c, th});
    b->ArgNames({"rows", "cols", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
    if (t == QuantType::Q4_K || t == QuantType::Q6_K || t == QuantType::Q8_0) {
      const std::string packed_name = "quant_matvec_packed/" + std::string(trueno::quant_info(t).name);
      auto* p = benchmark::RegisterBenchmark(packed_name.c_str(), matvec_packed, t);
      for (auto [r, c] : {std::pair<int, int>{4096, 4096}, {11008, 4096}, {4096, 11008}, {4096, 14336}})
        for (int th : {1, 0}) p->Args({r, c, th});
      p->ArgNames({"rows", "cols", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
      const std::string hot_name = "quant_matvec_packed_hot/" + std::string(trueno::quant_info(t).name);
      auto* h = benchmark::RegisterBenchmark(hot_name.c_str(), matvec_packed_hot, t);
      for (int th : {1, 0}) h->Args({4096, 4096, th});
      h->ArgNames({"rows", "cols", "threads"})->UseRealTime()->Unit(benchmark::kMillisecond);
    }
    const std::string pname = "quant_prefill/" + std::string(trueno::quant_info(t).name);
    benchmark::RegisterBenchmark(pname.c_str(), prefill, t)->Arg(16)->Arg(64)->Arg(512)->ArgName("m")->UseRealTime()->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace
