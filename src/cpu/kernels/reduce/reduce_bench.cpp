// Benchmarks of the reduce family: every op on every available backend, sizes 1K..16M (bench_util).
#include "bench_util.h"

#include <cstring>

namespace {
const int registered = trueno::bench::register_family("reduce");
}  // namespace

// The peer: OpenBLAS sdot on the same sizes, single-threaded.
#include <cblas.h>

namespace {
void openblas_sdot(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const auto x = trueno::bench::random_floats(n, -4, 4, 1), y = trueno::bench::random_floats(n, 0.5f, 2, 2);
  openblas_set_num_threads(1);
  for (auto _ : state) benchmark::DoNotOptimize(cblas_sdot(n, x.data(), 1, y.data(), 1));
  state.SetBytesProcessed(state.iterations() * 8 * static_cast<std::int64_t>(n));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(openblas_sdot)->RangeMultiplier(16)->Range(1024, 16 << 20);

// Memory-bandwidth yardstick for the element-wise tables: memcpy streams 8 bytes per float.
void memcpy_floats(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto x = trueno::bench::random_floats(n, -1, 1, 1);
  std::vector<float> y(n);
  for (auto _ : state) {
    std::memcpy(y.data(), x.data(), n * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 8 * static_cast<std::int64_t>(n));
}
BENCHMARK(memcpy_floats)->RangeMultiplier(16)->Range(1024, 16 << 20);
}  // namespace
