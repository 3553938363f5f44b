// y[rows] = W x for F32, F16 or BF16 weights (any cols, rows as in the file) and f32 activations; with
// round_x the activations are rounded to f16 first, as the CPU forward pass does for F16 weights
// (realizar Note [Reference arithmetic]). One warp per row, lanes stride the columns (coalesced).
#include "prelude.cuh"

namespace {
constexpr int kWarps = TRUENO_GEMV_WARPS;

template <class Load>
__device__ __forceinline__ float row_dot(Load load, const float* __restrict__ x, int cols, bool round_x) {
  const int lane = threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f;
  int i = lane;
  for (; i + 32 < cols; i += 64) {
    const float x0 = round_x ? round_to_f16(x[i]) : x[i], x1 = round_x ? round_to_f16(x[i + 32]) : x[i + 32];
    a0 += load(i) * x0, a1 += load(i + 32) * x1;
  }
  if (i < cols) a0 += load(i) * (round_x ? round_to_f16(x[i]) : x[i]);
  return warp_sum(a0 + a1);
}
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_f32(GemvTargets t_, const float* __restrict__ x, int cols, int accumulate) {
  overlap_prologue();
  const int row = blockIdx.x * kWarps + threadIdx.y;
  if (row >= t_.rows[blockIdx.y]) return;
  const float* wr = reinterpret_cast<const float*>(t_.w[blockIdx.y]) + static_cast<u64>(row) * cols;
  float* y = t_.y[blockIdx.y];
  const float v = row_dot([wr](int i) { return wr[i]; }, x, cols, false);
  if (threadIdx.x == 0) y[row] = accumulate ? y[row] + v : v;
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_f16(GemvTargets t_, const float* __restrict__ x, int cols, int accumulate, int round_x) {
  overlap_prologue();
  const int row = blockIdx.x * kWarps + threadIdx.y;
  if (row >= t_.rows[blockIdx.y]) return;
  const u16* wr = reinterpret_cast<const u16*>(t_.w[blockIdx.y]) + static_cast<u64>(row) * cols;
  float* y = t_.y[blockIdx.y];
  const float v = row_dot([wr](int i) { return f16_to_f32(wr[i]); }, x, cols, round_x != 0);
  if (threadIdx.x == 0) y[row] = accumulate ? y[row] + v : v;
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_bf16(GemvTargets t_, const float* __restrict__ x, int cols, int accumulate) {
  overlap_prologue();
  const int row = blockIdx.x * kWarps + threadIdx.y;
  if (row >= t_.rows[blockIdx.y]) return;
  const u16* wr = reinterpret_cast<const u16*>(t_.w[blockIdx.y]) + static_cast<u64>(row) * cols;
  float* y = t_.y[blockIdx.y];
  const float v = row_dot([wr](int i) { return __int_as_float(static_cast<int>(static_cast<u32>(wr[i]) << 16)); }, x, cols, false);
  if (threadIdx.x == 0) y[row] = accumulate ? y[row] + v : v;
}
