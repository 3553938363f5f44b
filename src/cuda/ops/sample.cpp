// Launchers for kernels/sample_ops.cu (ops/sample.h).
//
// Note [Device top-k]
// Rounds of tiles: each block sorts a tile of 2048 candidates in shared memory (bitonic, on the keys of
// Note [Sample keys], sample_ops.cu) and keeps its best k; the kept keys are the next round's candidates,
// until one tile is left, whose best k are the answer. A candidate among the k best overall is among the
// k best of its tile, so no round drops one, and keys never tie, so the order is exact: logit descending,
// then id ascending, the CPU sampler's. With k <= 1024 a full tile keeps at most half of itself: a 152K
// vocabulary takes 3 rounds for k = 40 (75 tiles, then 2, then 1), 8 for k = 1024.
#include "trueno/cuda/ops/sample.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

constexpr std::size_t kTile = 2048;       // SAMPLE_TILE in kernels/sample_ops.cu
constexpr unsigned kArgmaxThreads = 256;  // per block, as the kernels' launch bounds
constexpr std::size_t kMaxArgmaxParts = 256;
constexpr std::size_t kDrawBlock = 256;   // DRAW_BLOCK in kernels/sample_ops.cu, realizar's Sampler::kDrawBlock

api::CUfunction fn(Context& c, const char* name) { return c.function("sample_ops", name); }

std::size_t tiles(std::size_t n) { return (n + kTile - 1) / kTile; }

std::size_t argmax_parts(std::size_t n) { return std::clamp<std::size_t>((n + 1023) / 1024, 1, kMaxArgmaxParts); }

void check_length(const char* op, std::size_t n, const SampleScratch& s) {
  if (n == 0 || n > s.n || n > INT_MAX)
    throw InvalidArgument(strcat("cuda ", op, ": ", n, " logits (the scratch holds 1 to ", s.n, ")"));
}

}  // namespace

SampleScratch::SampleScratch(Context& c, std::size_t n_)
    : n(n_),
      partial(c, kMaxArgmaxParts * (sizeof(std::uint64_t) + sizeof(int))),
      keys_a(c, std::max<std::size_t>(tiles(n_), 2) * kMaxTopK * sizeof(std::uint64_t)),
      keys_b(c, std::max<std::size_t>(tiles(n_), 2) * kMaxTopK * sizeof(std::uint64_t)),
      weights(c, n_ * sizeof(float)),
      sums(c, (n_ + kDrawBlock - 1) / kDrawBlock * sizeof(double)) {}

void argmax(Context& c, api::CUdeviceptr x, std::size_t n, SampleScratch& s, api::CUdeviceptr out) {
  check_length("argmax", n, s);
  int nn = static_cast<int>(n), parts = static_cast<int>(argmax_parts(n));
  api::CUdeviceptr best = s.partial.ptr(), bad = best + kMaxArgmaxParts * sizeof(std::uint64_t);
  void* p1[] = {&x, &nn, &best, &bad};
  launch(c, fn(c, "argmax_partial"), static_cast<unsigned>(parts), 1, kArgmaxThreads, 1, p1);
  void* p2[] = {&x, &best, &bad, &parts, &out};
  launch(c, fn(c, "argmax_final"), 1, 1, kArgmaxThreads, 1, p2);
}

void repeat_penalty(Context& c, api::CUdeviceptr x, api::CUdeviceptr ids, std::size_t n_ids, float penalty) {
  if (n_ids == 0) return;
  if (n_ids > INT_MAX) throw InvalidArgument(strcat("cuda repeat_penalty: ", n_ids, " ids"));
  int n = static_cast<int>(n_ids);
  void* params[] = {&x, &ids, &n, &penalty};
  launch(c, fn(c, "repeat_penalty"), static_cast<unsigned>((n_ids + 255) / 256), 1, 256, 1, params);
}

void top_k(Context& c, api::CUdeviceptr x, std::size_t n, int k, SampleScratch& s, api::CUdeviceptr out) {
  check_length("top_k", n, s);
  if (k < 1 || k > kMaxTopK || static_cast<std::size_t>(k) > n)
    throw InvalidArgument(strcat("cuda top_k: k = ", k, " is outside [1, min(", n, " logits, ", kMaxTopK, ")]"));
  check(c.driver().memset_d8_async(out, 0, sizeof(TopKHeader), c.stream()), "cuMemsetD8Async(top_k header)");
  const api::CUfunction f = fn(c, "top_k_tiles");
  api::CUdeviceptr in = 0, keys = s.keys_a.ptr(), spare = s.keys_b.ptr();
  for (std::size_t m = n;;) {  // Note [Device top-k]
    const std::size_t t = tiles(m);
    int mm = static_cast<int>(m);
    void* params[] = {&x, &in, &mm, &k, &keys, &out};
    launch(c, f, static_cast<unsigned>(t), 1, 1024, 1, params);
    if (t == 1) return;
    m = (t - 1) * k + std::min<std::size_t>(k, m - (t - 1) * kTile);
    in = keys;
    std::swap(keys, spare);
  }
}

void temperature_draw(Context& c, api::CUdeviceptr x, std::size_t n, float inv_t, double u, SampleScratch& s, api::CUdeviceptr out) {
  check_length("temperature_draw", n, s);
  if (!(inv_t > 0) || !(u >= 0 && u < 1))
    throw InvalidArgument(strcat("cuda temperature_draw: 1/temperature ", inv_t, " must be > 0 and u ", u, " in [0, 1)"));
  int nn = static_cast<int>(n);
  api::CUdeviceptr w = s.weights.ptr(), sums = s.sums.ptr();
  void* params[] = {&x, &nn, &inv_t, &u, &w, &sums, &out};
  launch(c, fn(c, "temperature_draw"), 1, 1, 1024, 1, params);
}

}  // namespace trueno::cuda
