// GEMM benchmarks: square 256..4096, 1 thread and all threads, every available backend, with
// OpenBLAS sgemm measured in the same run as the peer. Counter GFLOPS = 2 n^3 / time.
#include <cblas.h>

#include <string>

#include "bench_util.h"
#include "trueno/trueno.h"

namespace {

void set_flops(benchmark::State& state, double n) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n * static_cast<double>(state.iterations()) * 1e-9,
                                                benchmark::Counter::kIsRate);
}

void trueno_matmul(benchmark::State& state, trueno::Backend b) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const auto a = trueno::bench::random_floats(n * n, -1, 1, 1), bm = trueno::bench::random_floats(n * n, -1, 1, 2);
  std::vector<float> c(n * n);
  const int saved = trueno::num_threads();
  trueno::set_num_threads(threads == 0 ? trueno::physical_cores() : threads);
  for (auto _ : state) trueno::ops::matmul(n, n, n, a.data(), n, bm.data(), n, c.data(), n, b);
  trueno::set_num_threads(saved);
  set_flops(state, static_cast<double>(n));
}

void openblas_sgemm(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const auto a = trueno::bench::random_floats(n * n, -1, 1, 1), bm = trueno::bench::random_floats(n * n, -1, 1, 2);
  std::vector<float> c(static_cast<std::size_t>(n) * n);
  openblas_set_num_threads(threads == 0 ? trueno::physical_cores() : threads);
  for (auto _ : state)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, bm.data(), n, 0.0f, c.data(), n);
  set_flops(state, n);
}

// Args: {n, threads (0 = all physical cores)}.
void shapes(benchmark::internal::Benchmark* bm, std::int64_t max_n) {
  for (std::int64_t n = 256; n <= max_n; n *= 2)
    for (std::int64_t t : {1, 0}) bm->Args({n, t});
  bm->ArgNames({"n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

const int registered = [] {
  for (trueno::Backend b : trueno::available()) {
    const std::string label = "matmul/" + std::string(trueno::name(b));
    shapes(benchmark::RegisterBenchmark(label.c_str(), trueno_matmul, b), b == trueno::Backend::Scalar ? 512 : 4096);
  }
  shapes(benchmark::RegisterBenchmark("matmul/openblas", openblas_sgemm), 4096);
  return 0;
}();

}  // namespace
