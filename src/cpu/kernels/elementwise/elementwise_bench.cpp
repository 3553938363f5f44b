// Benchmarks of the elementwise family: every op on every available backend, sizes 1K..16M (bench_util).
#include "bench_util.h"

namespace {
const int registered = trueno::bench::register_family("elementwise");
}  // namespace

// Through the public API with all threads (large calls are split across the pool), against memcpy.
#include "trueno/trueno.h"

namespace {
template <void (*Op)(std::span<const float>, std::span<float>, trueno::Exec)>
void api_unary(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto x = trueno::bench::random_floats(n, -4, 4, 1);
  std::vector<float> out(n);
  for (auto _ : state) Op(x, out, std::nullopt);
  state.SetBytesProcessed(state.iterations() * 8 * static_cast<std::int64_t>(n));
}
void api_add(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto x = trueno::bench::random_floats(n, -4, 4, 1), y = trueno::bench::random_floats(n, -4, 4, 2);
  std::vector<float> out(n);
  for (auto _ : state) trueno::ops::add(x, y, out);
  state.SetBytesProcessed(state.iterations() * 12 * static_cast<std::int64_t>(n));
}
BENCHMARK(api_add)->Arg(16 << 20)->UseRealTime();
BENCHMARK_TEMPLATE(api_unary, trueno::ops::exp)->Name("api_exp")->Arg(16 << 20)->UseRealTime();
BENCHMARK_TEMPLATE(api_unary, trueno::ops::silu)->Name("api_silu")->Arg(16 << 20)->UseRealTime();
}  // namespace
