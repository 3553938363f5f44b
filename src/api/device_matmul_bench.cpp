// Square f32 matmul through the public device API (issue 22 item 5), on every available device: with the
// operands resident (A, B, C stay on the device; one synchronize per product) and with the transfers a
// host caller pays (upload A and B, multiply, download C). GFLOPS = 2 n^3 / time. The CPU tiers and
// OpenBLAS in the same run: matmul/<tier> and matmul/openblas (src/cpu/kernels/gemm/gemm_bench.cpp).
#include <string>

#include "bench_util.h"
#include "trueno/device.h"
#include "trueno/device_ops.h"
#include "trueno/device_tensor.h"

namespace {

void device_matmul(benchmark::State& state, trueno::Device d, bool transfers) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto a = trueno::bench::random_floats(n * n, -1, 1, 1), b = trueno::bench::random_floats(n * n, -1, 1, 2);
  std::vector<float> c(n * n);
  auto A = trueno::DeviceTensor::upload(d, a, {n, n}), B = trueno::DeviceTensor::upload(d, b, {n, n});
  auto C = trueno::DeviceTensor::empty(d, {n, n});
  trueno::ops::matmul(A, B, C);  // warm-up: kernels, plans
  trueno::synchronize(d);
  for (auto _ : state) {
    if (transfers) {
      A = trueno::DeviceTensor::upload(d, a, {n, n}), B = trueno::DeviceTensor::upload(d, b, {n, n});
      trueno::ops::matmul(A, B, C);
      C.download(c);
    } else {
      trueno::ops::matmul(A, B, C);
      trueno::synchronize(d);
    }
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) * 1e-9,
                                                benchmark::Counter::kIsRate);
}

const int registered = [] {
  for (const trueno::DeviceStatus& s : trueno::device_report()) {
    if (!s.available) continue;
    // A CPU implementation of a device (lavapipe) takes seconds at 2048: small sizes only.
    const std::int64_t max_n = s.automatic ? 8192 : 512;
    for (const bool transfers : {false, true}) {
      const std::string label = "device_matmul/" + s.device.str() + (transfers ? "/with_transfers" : "/resident");
      auto* bm = benchmark::RegisterBenchmark(label.c_str(), device_matmul, s.device, transfers);
      for (std::int64_t n = 256; n <= max_n; n *= 2) bm->Arg(n);
      bm->ArgName("n")->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
  return 0;
}();

}  // namespace
