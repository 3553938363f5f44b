// Launchers for kernels/quantize_q8_k.cu and the gemv_*.cu kernels (gemv.h).
#include "trueno/cuda/ops/gemv.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/strings.h"
#include "trueno/log.h"
#include "cuda/nvrtc.h"

namespace trueno::cuda {
namespace {

constexpr std::size_t kQK = 256;       // elements per Q8_K / k-quant block
// Warps per thread block in every gemv kernel, rows per warp in the quantized ones: as the kernels'
// TRUENO_GEMV_WARPS / TRUENO_GEMV_ROWS (tuning knobs, nvrtc.h).
const unsigned kWarps = static_cast<unsigned>(tuning_define("TRUENO_GEMV_WARPS", 2));
const unsigned kQuantRowsPerWarp = static_cast<unsigned>(tuning_define("TRUENO_GEMV_ROWS", 4));
const unsigned kQ6KRowsPerWarp = static_cast<unsigned>(tuning_define("TRUENO_Q6K_ROWS", 2));
const unsigned kB32RowsPerWarp = static_cast<unsigned>(tuning_define("TRUENO_GEMV_ROWS_B32", 3));  // Q8_0, Q4_0
const unsigned kSplitRowsPerWarp = static_cast<unsigned>(tuning_define("TRUENO_Q8S_ROWS", 4));     // Q8_0 split

std::size_t check_blocks(const char* op, std::size_t n) {
  if (n == 0 || n % kQK != 0) throw ShapeError(strcat(op, ": length ", n, " is not a positive multiple of ", kQK));
  return n;
}

unsigned grid_for(std::size_t rows, unsigned rows_per_warp) {
  const std::size_t per_block = std::size_t{kWarps} * rows_per_warp;
  return static_cast<unsigned>((rows + per_block - 1) / per_block);
}

void check_q8(const char* op, std::size_t cols, const Q8Activations* x) {
  check_blocks(op, cols);
  if (x == nullptr) throw InvalidArgument(strcat(op, ": quantized activations are required"));
  if (x->n != cols) throw ShapeError(strcat(op, ": activations have ", x->n, " elements, the matrix ", cols, " columns"));
}

// Note [A block an SM for the next kernel]
// A stream launch's grid is what is resident at once, so it holds every SM's registers until its warps
// retire, together, at its end; the next kernel's blocks (launched early, Note [Overlapped launches]) could
// not become resident before then to ask for their first weights (Note [Weights before the wait]). The grid
// leaves one block an SM free for them. Measured on the H200 (2026-12-04 sixth, realizar bench tg128, two
// rounds in one lease): 7B Q4_K_M 544.5 / 547.5 against 537.3 / 533.0 with no block free; 2 blocks free
// 531.8 / 533.6; the 1.1B 1,600.8 / 1,622.3 against 1,597.2 / 1,621.3. TRUENO_GEMV_STREAM_SPARE (a tuning
// knob): the blocks an SM left free.
const int kStreamSpare = std::max(0, tuning_define("TRUENO_GEMV_STREAM_SPARE", 1));
// Blocks of f (32 x kWarps threads) resident on the whole device at once less kStreamSpare an SM (at least
// one an SM), asked once per function. The stream kernels' grid size is a speed choice only: any grid gives
// the same y.
unsigned resident_blocks(Context& c, api::CUfunction f) {
  static std::mutex m;
  static std::map<api::CUfunction, unsigned> known;
  const std::lock_guard lock(m);
  if (const auto it = known.find(f); it != known.end()) return it->second;
  int per_sm = 0;
  const api::CUresult r = c.driver().occupancy_max_blocks(&per_sm, f, static_cast<int>(32 * kWarps), 0);
  log(LogLevel::Info, strcat("cuda gemv: ", per_sm, " blocks of ", 32 * kWarps, " threads resident per SM (result ", r, "), ", c.info().sms, " SMs"));
  if (r != api::kSuccess || per_sm < 1) per_sm = 1;
  per_sm = std::max(1, per_sm - kStreamSpare);  // Note [A block an SM for the next kernel]
  return known[f] = static_cast<unsigned>(per_sm * c.info().sms);
}

}  // namespace

Q8Activations::Q8Activations(Context& c, std::size_t n_)
    : n(check_blocks("Q8Activations", n_)), q(c, n_), d(c, n_ / kQK * sizeof(float)), bsums(c, n_ / 16 * sizeof(short)) {}

void quantize_q8_k(Context& c, api::CUdeviceptr x, Q8Activations& out) {
  const api::CUfunction f = c.function("quantize_q8_k", "quantize_q8_k");
  api::CUdeviceptr q = out.q.ptr(), d = out.d.ptr(), bs = out.bsums.ptr();
  void* params[] = {&x, &q, &d, &bs};
  launch_overlapped(c, f, static_cast<unsigned>(out.n / kQK), 1, 256, 1, params);
}

void gemv_q4_k(Context& c, api::CUdeviceptr w, std::size_t rows, std::size_t cols, const Q8Activations& x, api::CUdeviceptr y) {
  gemv(c, QuantType::Q4_K, w, rows, cols, 0, &x, y);
}

bool gemv_takes_q8(QuantType type) {
  return type == QuantType::Q4_K || type == QuantType::Q5_K || type == QuantType::Q6_K || type == QuantType::Q8_0 ||
         type == QuantType::Q4_0;
}

bool gemv_supports(QuantType type) {
  return gemv_takes_q8(type) || type == QuantType::F16 || type == QuantType::BF16 || type == QuantType::F32;
}

bool has_split_layout(QuantType type) { return type == QuantType::Q8_0 || type == QuantType::Q6_K; }

WeightLayout preferred_layout(QuantType type, std::size_t cols) {
  static const bool q8_0 = tuning_define("TRUENO_Q8_0_SPLIT", 1) != 0, q6_k = tuning_define("TRUENO_Q6_K_SPLIT", 1) != 0;
  const bool split = type == QuantType::Q8_0 ? q8_0 : type == QuantType::Q6_K ? q6_k : false;
  return split && cols > 0 && cols % kQK == 0 ? WeightLayout::Split : WeightLayout::File;
}

void gemv(Context& c, QuantType type, api::CUdeviceptr w, std::size_t rows, std::size_t cols, api::CUdeviceptr x,
          const Q8Activations* xq, api::CUdeviceptr y, bool round_x, bool accumulate, WeightLayout layout) {
  const GemvTarget t{w, rows, y};
  gemv_multi(c, type, std::span(&t, 1), cols, x, xq, round_x, accumulate, layout);
}

namespace {
// The kernels' GemvTargets (kernels/prelude.cuh), passed by value.
struct KernelTargets {
  api::CUdeviceptr w[3];
  api::CUdeviceptr y[3];
  int rows[3];
};
static_assert(sizeof(KernelTargets) == 64);

// The kernels' targets of 1 to 3 matrices (InvalidArgument otherwise) and the most rows of any.
KernelTargets kernel_targets(const char* op, std::span<const GemvTarget> targets, std::size_t& max_rows) {
  if (targets.empty() || targets.size() > 3) throw InvalidArgument(strcat(op, ": ", targets.size(), " matrices in one launch (1 to 3)"));
  KernelTargets kt{};
  max_rows = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    kt.w[i] = targets[i].w, kt.y[i] = targets[i].y, kt.rows[i] = static_cast<int>(targets[i].rows);
    max_rows = std::max(max_rows, targets[i].rows);
  }
  return kt;
}
}  // namespace

bool gemv_mixed_launches() {
  static const bool on = tuning_define("TRUENO_GEMV_MIXED", 1) != 0;
  return on;
}

void gemv_q4_k_q6_k(Context& c, std::span<const GemvTarget> q4_k, const GemvTarget& q6_k_split, std::size_t cols, const Q8Activations& xq,
                    bool accumulate) {
  if (q4_k.empty() || q4_k.size() > 2 || cols % kQK != 0 || q6_k_split.w % 16 != 0)
    throw InvalidArgument(strcat("cuda gemv q4_k + q6_k in one launch: ", q4_k.size(), " q4_k matrices (1 or 2), ", cols,
                                 " columns (a multiple of 256), the q6_k matrix ", q6_k_split.w % 16 == 0 ? "" : "not ",
                                 "16-byte aligned"));
  check_q8("cuda gemv q4_k + q6_k", cols, &xq);
  KernelTargets t4{}, t6{};
  std::size_t max_rows = 0;
  for (std::size_t i = 0; i < q4_k.size(); ++i) {
    t4.w[i] = q4_k[i].w, t4.y[i] = q4_k[i].y, t4.rows[i] = static_cast<int>(q4_k[i].rows);
    max_rows = std::max(max_rows, q4_k[i].rows);
  }
  t6.w[0] = q6_k_split.w, t6.y[0] = q6_k_split.y, t6.rows[0] = static_cast<int>(q6_k_split.rows);
  int blocks4 = static_cast<int>(grid_for(max_rows, kQuantRowsPerWarp)), n4 = static_cast<int>(q4_k.size());
  const unsigned grid = static_cast<unsigned>(blocks4 * n4) + grid_for(q6_k_split.rows, kQ6KRowsPerWarp);
  if (grid == 0) return;  // no rows (as gemv_multi)
  api::CUdeviceptr q = xq.q.ptr(), d = xq.d.ptr(), bs = xq.bsums.ptr();
  int nb = static_cast<int>(cols / kQK), acc = accumulate ? 1 : 0;
  void* params[] = {&t4, &t6, &q, &d, &bs, &nb, &blocks4, &n4, &acc};
  launch_overlapped(c, c.function("gemv_mixed", "gemv_q4_k_q6_k_split"), grid, 1, 32, kWarps, params);
}

namespace {
// Note [A warp's loads across its row groups]: where the stream kernel pays. Measured on the H200 (one
// matrix, BM_CudaGemvQ4K): it gains where its warps take more than one group each (11008 x 4096: 11.1 ->
// 9.95 us) or a group has many block steps (4096 x 14336: 14.8 -> 13.4, 2048 x 5632: 5.91 -> 5.63), and
// loses where each warp has one short group (4096 x 4096: 5.20 -> 5.36, 2048 x 2048: 2.33 -> 2.67). Inside a
// token, with a block an SM left to the next kernel (Note [A block an SM for the next kernel]), groups of 4
// steps pay too: with the 7B's wo (4096 x 4096) in the stream form tg128 was 550.4 / 550.4 against 544.5 /
// 547.5 (H200, 2026-12-04 sixth, one lease). With every launch in the stream form the 1.1B, whose groups are
// 2 steps, lost: 1,577.8 / 1,597.9 against 1,600.8 / 1,622.3. So: 4 steps or more, or more than one group a
// warp. TRUENO_GEMV_STREAM (a tuning knob): 1 this rule, 2 everywhere, 0 never.
K45Rows k45_rows(Context& c, QuantType type, std::size_t rows, int nb, unsigned ny) {
  static const int knob = tuning_define("TRUENO_GEMV_STREAM", 1);
  if (knob == 0 || knob == 2) return knob == 2 ? K45Rows::Stream : K45Rows::OneGroup;
  const int steps = (nb + 3) / 4;
  const std::size_t groups = (rows + kQuantRowsPerWarp - 1) / kQuantRowsPerWarp;
  const api::CUfunction f = c.function("gemv_k45", type == QuantType::Q4_K ? "gemv_q4_k_stream" : "gemv_q5_k_stream");
  return steps >= 4 || groups > std::size_t{resident_blocks(c, f) / ny} * kWarps ? K45Rows::Stream : K45Rows::OneGroup;
}
}  // namespace

void gemv_k45(Context& c, QuantType type, std::span<const GemvTarget> targets, std::size_t cols, const Q8Activations& xq, bool accumulate,
              K45Rows how) {
  if (type != QuantType::Q4_K && type != QuantType::Q5_K)
    throw InvalidArgument(strcat("cuda gemv_k45: ", quant_info(type).name, " is not q4_k or q5_k"));
  std::size_t max_rows = 0;
  KernelTargets kt = kernel_targets("cuda gemv_k45", targets, max_rows);
  check_q8(strcat("cuda gemv ", quant_info(type).name).c_str(), cols, &xq);
  if (max_rows == 0) return;
  const auto ny = static_cast<unsigned>(targets.size());
  if (how == K45Rows::Auto) how = k45_rows(c, type, max_rows, static_cast<int>(cols / kQK), ny);
  const bool stream = how == K45Rows::Stream, q4 = type == QuantType::Q4_K;
  const api::CUfunction f = c.function("gemv_k45", stream ? (q4 ? "gemv_q4_k_stream" : "gemv_q5_k_stream") : (q4 ? "gemv_q4_k" : "gemv_q5_k"));
  unsigned grid = grid_for(max_rows, kQuantRowsPerWarp);
  if (stream) grid = std::min(grid, std::max(1u, resident_blocks(c, f) / ny));  // Note [A warp's loads across its row groups]
  api::CUdeviceptr q = xq.q.ptr(), d = xq.d.ptr(), bs = xq.bsums.ptr();
  int nb = static_cast<int>(cols / kQK), acc = accumulate ? 1 : 0;
  void* params[] = {&kt, &q, &d, &bs, &nb, &acc};
  launch_overlapped(c, f, grid, ny, 32, kWarps, params);
}

void gemv_multi(Context& c, QuantType type, std::span<const GemvTarget> targets, std::size_t cols, api::CUdeviceptr x,
                const Q8Activations* xq, bool round_x, bool accumulate, WeightLayout layout) {
  if (layout == WeightLayout::Split && !has_split_layout(type))
    throw InvalidArgument(strcat("cuda gemv: ", quant_info(type).name, " has no split layout (q8_0 and q6_k have)"));
  if (type == QuantType::Q4_K || type == QuantType::Q5_K) {
    if (xq == nullptr) check_q8(strcat("cuda gemv ", quant_info(type).name).c_str(), cols, xq);  // throws; gemv_k45 checks the rest
    return gemv_k45(c, type, targets, cols, *xq, accumulate, K45Rows::Auto);
  }
  std::size_t max_rows = 0;
  KernelTargets kt = kernel_targets("cuda gemv", targets, max_rows);
  if (max_rows == 0) return;
  const auto ny = static_cast<unsigned>(targets.size());
  int n = static_cast<int>(cols), acc = accumulate ? 1 : 0;
  switch (type) {
    case QuantType::Q6_K:
    case QuantType::Q8_0:
    case QuantType::Q4_0: {
      check_q8(strcat("cuda gemv ", quant_info(type).name).c_str(), cols, xq);
      api::CUdeviceptr q = xq->q.ptr(), d = xq->d.ptr(), bs = xq->bsums.ptr();
      int nb = n / static_cast<int>(kQK);
      void* with_bsums[] = {&kt, &q, &d, &bs, &nb, &acc};
      void* without[] = {&kt, &q, &d, &nb, &acc};  // gemv_q6_k needs no activation sums
      const api::CUfunction f = type == QuantType::Q6_K ? (layout == WeightLayout::Split ? c.function("gemv_q6_k", "gemv_q6_k_split")
                                                                                    : c.function("gemv_q6_k", "gemv_q6_k"))
                                : layout == WeightLayout::Split ? c.function("gemv_q8_0", "gemv_q8_0_split")
                                : type == QuantType::Q8_0       ? c.function("gemv_q8_0", "gemv_q8_0")
                                                          : c.function("gemv_q8_0", "gemv_q4_0");
      const bool b32 = type == QuantType::Q8_0 || type == QuantType::Q4_0;
      // Note [Staged 2-byte-aligned blocks]: 16-byte steps; the split layouts' 8- and 16-byte loads
      for (std::size_t i = 0; (b32 || layout == WeightLayout::Split) && i < targets.size(); ++i)
        if (targets[i].w % 16 != 0)
          throw InvalidArgument(strcat("cuda gemv ", quant_info(type).name, ": the matrix must start 16-byte aligned"));
      const unsigned per_warp = type == QuantType::Q8_0 && layout == WeightLayout::Split ? kSplitRowsPerWarp
                                : b32 ? kB32RowsPerWarp : kQ6KRowsPerWarp;
      return launch_overlapped(c, f, grid_for(max_rows, per_warp), ny, 32, kWarps,
                               type == QuantType::Q6_K ? without : with_bsums);
    }
    case QuantType::F32: {
      const api::CUfunction f = c.function("gemv_float", "gemv_f32");
      void* params[] = {&kt, &x, &n, &acc};
      return launch_overlapped(c, f, grid_for(max_rows, 1), ny, 32, kWarps, params);
    }
    case QuantType::BF16: {
      const api::CUfunction f = c.function("gemv_float", "gemv_bf16");
      void* params[] = {&kt, &x, &n, &acc};
      return launch_overlapped(c, f, grid_for(max_rows, 1), ny, 32, kWarps, params);
    }
    case QuantType::F16: {
      const api::CUfunction f = c.function("gemv_float", "gemv_f16");
      int rx = round_x ? 1 : 0;
      void* params[] = {&kt, &x, &n, &acc, &rx};
      return launch_overlapped(c, f, grid_for(max_rows, 1), ny, 32, kWarps, params);
    }
    default:
      throw InvalidArgument(strcat("cuda gemv: weight type ", quant_info(type).name,
                                   " has no CUDA kernel yet (supported: q4_0, q8_0, q4_k, q5_k, q6_k, f16, bf16, f32)"));
  }
}

}  // namespace trueno::cuda
