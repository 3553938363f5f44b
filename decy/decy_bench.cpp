// The speed of decy's translations next to their CUDA originals (issue 17 item 5), on the device that has
// both (the H200: NVIDIA's Vulkan driver and CUDA): for every case of decy_cuda_cases.h, microseconds per
// launch of the CUDA kernel (kRepeat launches queued, then a synchronize) and of decy's SPIR-V (kRepeat
// dispatches in one command buffer, a barrier between them, then a submit and wait), after a warm-up.
//   build/release/decy/decy_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "decy_cuda_cases.h"

#if defined(TRUENO_TESTS_WITH_VULKAN) && defined(DECY_TESTS_WITH_CUDA)
namespace {
namespace cu = trueno::cuda;
constexpr int kRepeat = 50;

cu::Context& cuda() {
  static const std::shared_ptr<cu::Context> c = cu::Context::open(0);
  return *c;
}

void BM_DecyCuda(benchmark::State& state, const decy::cases::Case& k) {
  auto p = decy::cases::prepare(k, cuda(), decy::test::context(), decy::test::rng());
  decy::cases::launch_cuda(k, cuda(), p);
  cuda().synchronize();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeat; ++i) decy::cases::launch_cuda(k, cuda(), p);
    cuda().synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kRepeat);
  }
}

void BM_DecyVulkan(benchmark::State& state, const decy::cases::Case& k) {
  auto p = decy::cases::prepare(k, cuda(), decy::test::context(), decy::test::rng());
  {
    trueno::vulkan::Recorder warm(decy::test::context());
    decy::cases::record_vulkan(k, decy::test::context(), p, warm, 1);
    warm.submit();
  }
  for (auto _ : state) {
    trueno::vulkan::Recorder rec(decy::test::context());
    decy::cases::record_vulkan(k, decy::test::context(), p, rec, kRepeat);
    const auto t0 = std::chrono::steady_clock::now();
    rec.submit();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kRepeat);
  }
}

const int registered = [] {
  std::string why;
  if (!cu::probe(0, &why) || !trueno::vulkan::probe(0, &why)) {
    std::fprintf(stderr, "decy_bench: needs a CUDA and a Vulkan device: %s\n", why.c_str());
    return 0;
  }
  static const auto cases = decy::cases::all_cases();
  for (const auto& k : cases) {
    benchmark::RegisterBenchmark(("BM_DecyCuda/" + k.label).c_str(), BM_DecyCuda, k)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_DecyVulkan/" + k.label).c_str(), BM_DecyVulkan, k)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);
  }
  return 0;
}();
}  // namespace
#endif

BENCHMARK_MAIN();
