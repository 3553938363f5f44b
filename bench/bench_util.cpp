// Generic per-kind benchmark bodies for the vector ops of the kernel list.
#include "bench_util.h"

#include <random>
#include <string>

#include "cpu/dispatch.h"
#include "cpu/registry.h"
#include "trueno/trueno.h"

namespace trueno::bench {

std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

namespace {

using cpu::Kind;

// Bytes each kernel call streams (reads + writes), for the GB/s column.
std::size_t bytes_moved(Kind kind, std::size_t n) {
  switch (kind) {
    case Kind::Binary: return 12 * n;
    case Kind::Ternary: return 16 * n;
    case Kind::Unary: case Kind::Scale: case Kind::Clamp: case Kind::Row: return 8 * n;
    case Kind::RmsNorm: return 12 * n;
    case Kind::LayerNorm: return 16 * n;
    case Kind::Reduce: case Kind::ArgReduce: return 4 * n;
    case Kind::Reduce2: return 8 * n;
    case Kind::ToHalf: case Kind::FromHalf: return 6 * n;
    default: return 0;
  }
}

void run(benchmark::State& state, const cpu::KernelInfo* k, Backend b) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const cpu::KernelTable& t = *cpu::table_or_null(b);
  auto x = random_floats(n, -4.0f, 4.0f, 1), y = random_floats(n, 0.5f, 2.0f, 2), z = random_floats(n, -1.0f, 1.0f, 3);
  std::vector<float> out(n);
  std::vector<std::uint16_t> h(n, 0x3c00);
  for (auto _ : state) {
    switch (k->kind) {
      case Kind::Binary: k->fn<cpu::Binary>(t)(x.data(), y.data(), out.data(), n); break;
      case Kind::Unary: k->fn<cpu::Unary>(t)(x.data(), out.data(), n); break;
      case Kind::Scale: k->fn<cpu::Scale>(t)(x.data(), 1.5f, out.data(), n); break;
      case Kind::Clamp: k->fn<cpu::Clamp>(t)(x.data(), -1.0f, 1.0f, out.data(), n); break;
      case Kind::Ternary: k->fn<cpu::Ternary>(t)(x.data(), y.data(), z.data(), out.data(), n); break;
      case Kind::Reduce: benchmark::DoNotOptimize(k->fn<cpu::Reduce>(t)(x.data(), n)); break;
      case Kind::Reduce2: benchmark::DoNotOptimize(k->fn<cpu::Reduce2>(t)(x.data(), y.data(), n)); break;
      case Kind::ArgReduce: benchmark::DoNotOptimize(k->fn<cpu::ArgReduce>(t)(x.data(), n)); break;
      case Kind::Row: k->fn<cpu::Row>(t)(x.data(), out.data(), n); break;
      case Kind::RmsNorm: k->fn<cpu::RmsNorm>(t)(x.data(), y.data(), 1e-5f, out.data(), n); break;
      case Kind::LayerNorm: k->fn<cpu::LayerNorm>(t)(x.data(), y.data(), z.data(), 1e-5f, out.data(), n); break;
      case Kind::ToHalf: k->fn<cpu::ToHalf>(t)(x.data(), h.data(), n); break;
      case Kind::FromHalf: k->fn<cpu::FromHalf>(t)(h.data(), out.data(), n); break;
      default: state.SkipWithError("not a vector kernel"); return;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes_moved(k->kind, n)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

}  // namespace

int register_family(std::string_view family) {
  for (const auto& k : cpu::kernel_registry()) {
    if (k.family != family) continue;
    for (Backend b : available()) {
      const std::string label = std::string(k.name) + "/" + std::string(name(b));
      auto* bm = benchmark::RegisterBenchmark(label.c_str(), run, &k, b);
      for (std::int64_t n = 1024; n <= (16 << 20); n *= 16) bm->Arg(n);
      bm->Arg(16 << 20);
    }
  }
  return 0;
}

}  // namespace trueno::bench
