// A dependency-free kernel timing: block dots (Q4_K, Q6_K x Q8_K; Q4_0, Q8_0 x Q8_0; Q4_K, Q6_K and Q8_0
// rows interleaved by 8, per row) and an f32 dot, one 4096-wide row, on every CPU tier this binary has. Builds natively and for WebAssembly alike
// (Google Benchmark is not built for WebAssembly), for the table in docs/BROWSER.md:
//   native: g++ -O2 -std=c++20 -Iinclude -Isrc bench/kernel_speed_main.cpp build/<preset>/src/libtrueno.a -lpthread
//   wasm:   em++ -O2 -std=c++20 -fwasm-exceptions -pthread -Iinclude -Isrc bench/kernel_speed_main.cpp
//           build/wasm/src/libtrueno.a -sNODERAWFS=1 -sEXIT_RUNTIME=1 -sPTHREAD_POOL_SIZE=8
//           -sINITIAL_MEMORY=67108864 -o kernel_speed.js && node --no-experimental-fetch kernel_speed.js
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/dispatch.h"
#include "quant/blocks.h"
#include "quant/pack_x8.h"
#include "trueno/backend.h"

namespace {

constexpr std::size_t kCols = 4096;

template <class Block>
std::vector<Block> random_blocks(std::size_t nb, std::mt19937& rng) {
  std::vector<Block> v(nb);
  auto* p = reinterpret_cast<unsigned char*>(v.data());
  for (std::size_t i = 0; i < nb * sizeof(Block); ++i) p[i] = static_cast<unsigned char>(rng());
  return v;
}

// Nanoseconds per call of fn, best of 5 batches.
template <class Fn>
double time_ns(Fn fn) {
  volatile float sink = 0.0f;
  int reps = 1;
  for (;;) {  // batch to about 20 ms
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) sink = sink + fn();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (ns > 2e7) break;
    reps *= 2;
  }
  double best = 1e30;
  for (int b = 0; b < 5; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) sink = sink + fn();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / reps;
    best = ns < best ? ns : best;
  }
  return best;
}

}  // namespace

int main() {
  using namespace trueno;
  using namespace trueno::quant;
  std::mt19937 rng(7);
  auto w4k = random_blocks<BlockQ4_K>(kCols / 256, rng);
  auto w6k = random_blocks<BlockQ6_K>(kCols / 256, rng);
  auto w40 = random_blocks<BlockQ4_0>(kCols / 32, rng);
  auto w80 = random_blocks<BlockQ8_0>(kCols / 32, rng);
  auto x8k = random_blocks<BlockQ8_K>(kCols / 256, rng);
  auto w4k8 = random_blocks<BlockQ4_K>(8 * kCols / 256, rng);  // 8 rows
  std::vector<BlockQ4_Kx8> w4kx8(kCols / 256);
  pack_q4_k_x8(reinterpret_cast<const std::byte*>(w4k8.data()), kCols / 256 * sizeof(BlockQ4_K), kCols / 256,
               reinterpret_cast<std::byte*>(w4kx8.data()));
  auto w6k8 = random_blocks<BlockQ6_K>(8 * kCols / 256, rng);  // 8 rows
  std::vector<BlockQ6_Kx8> w6kx8(kCols / 256);
  pack_q6_k_x8(reinterpret_cast<const std::byte*>(w6k8.data()), kCols / 256 * sizeof(BlockQ6_K), kCols / 256,
               reinterpret_cast<std::byte*>(w6kx8.data()));
  auto w808 = random_blocks<BlockQ8_0>(8 * kCols / 32, rng);  // 8 rows
  std::vector<BlockQ8_0x8> w80x8(kCols / 32);
  pack_q8_0_x8(reinterpret_cast<const std::byte*>(w808.data()), kCols / 32 * sizeof(BlockQ8_0), kCols / 32,
               reinterpret_cast<std::byte*>(w80x8.data()));
  float out8[8];
  auto x80 = random_blocks<BlockQ8_0>(kCols / 32, rng);
  std::vector<float> a(kCols), b(kCols);
  for (std::size_t i = 0; i < kCols; ++i) a[i] = float(rng() % 1000) / 500.0f - 1.0f, b[i] = float(rng() % 1000) / 500.0f - 1.0f;
  std::printf("%-10s %12s %12s %12s %12s %12s %12s %12s %12s   (ns per %zu-wide row)\n", "tier", "q4_k.q8_k", "q4_k x8",
              "q6_k.q8_k", "q6_k x8", "q4_0.q8_0", "q8_0.q8_0", "q8_0 x8", "f32 dot", kCols);
  for (Backend be : available()) {
    const cpu::KernelTable* t = cpu::table_or_null(be);
    if (t == nullptr) continue;
    std::printf("%-10s %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f\n", std::string(name(be)).c_str(),
                time_ns([&] { return t->dot_q4_k_q8_k(w4k.data(), x8k.data(), w4k.size()); }),
                time_ns([&] {
                  t->dot_x8_q4_k_q8_k(w4kx8.data(), x8k.data(), w4kx8.size(), out8);
                  return out8[0] + out8[7];
                }) / 8,
                time_ns([&] { return t->dot_q6_k_q8_k(w6k.data(), x8k.data(), w6k.size()); }),
                time_ns([&] {
                  t->dot_x8_q6_k_q8_k(w6kx8.data(), x8k.data(), w6kx8.size(), out8);
                  return out8[0] + out8[7];
                }) / 8,
                time_ns([&] { return t->dot_q4_0_q8_0(w40.data(), x80.data(), w40.size()); }),
                time_ns([&] { return t->dot_q8_0_q8_0(w80.data(), x80.data(), w80.size()); }),
                time_ns([&] {
                  t->dot_x8_q8_0_q8_0(w80x8.data(), x80.data(), w80x8.size(), out8);
                  return out8[0] + out8[7];
                }) / 8,
                time_ns([&] { return t->dot(a.data(), b.data(), kCols); }));
  }
  return 0;
}
