// The public device ops on CUDA (trueno::ops on DeviceTensor; launchers in src/cuda/tensor_ops.cpp):
// element-wise, whole-tensor reductions, row-wise softmax / rmsnorm / layernorm, f32 <-> f16 and bf16. Matmul and
// f32 matvec go to cuBLAS, quantized matvec to the decode GEMV kernels. Every kernel here is launched with
// 256 threads per block (the block reductions assume it). The formulas are the CPU reference's
// (src/cpu/kernels/*/_ref.cpp), with the accurate libdevice functions (expf, tanhf, erfcf; no fast math).
#include "prelude.cuh"
#include "block_reduce.cuh"

__device__ __forceinline__ float sigmoid_times(float x, float u) { return x / (1.0f + expf(-u)); }

// out[i] = f(a[i], b[i]) or f(a[i]); op codes as the launcher's table (tensor_ops.cpp).
extern "C" __global__ void tensor_elementwise(const float* __restrict__ a, const float* __restrict__ b, float* out, u32 n, int op,
                                              float alpha) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float x = a[i];
    float y;
    switch (op) {
      case 0: y = __fadd_rn(x, b[i]); break;
      case 1: y = __fsub_rn(x, b[i]); break;
      case 2: y = __fmul_rn(x, b[i]); break;
      case 3: y = __fdiv_rn(x, b[i]); break;
      case 4: y = sigmoid_times(x, x) * b[i]; break;  // swiglu
      case 5: y = __fmul_rn(x, alpha); break;
      case 6: y = fabsf(x); break;
      case 7: y = x > 0.0f ? x : 0.0f; break;
      case 8: y = expf(x); break;
      case 9: y = 1.0f / (1.0f + expf(-x)); break;
      case 10: y = tanhf(x); break;
      // gelu_tanh as x * sigmoid(2u) and gelu_erf through erfc, as the CPU: no cancellation for x << 0
      case 11: y = sigmoid_times(x, ((x * x * x) * 0.044715f + x) * 1.5957691216057308f); break;
      case 12: y = (x * 0.5f) * erfcf(x * -0.70710678118654752f); break;
      case 13: y = sigmoid_times(x, x); break;  // silu
      // backward (trueno::grad, src/grad/grad.cpp): b is dy; x is the input (silu, gelu_tanh) or the output y
      case 14: {
        const float s = 1.0f / (1.0f + expf(-x));
        y = b[i] * (s * (1.0f + x * (1.0f - s)));
        break;
      }
      case 15: {  // Note [Saturated tanh] (src/grad/grad.cpp): 1 + t and 1 - t^2 from e = exp(-2|u|)
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x), e = expf(-2.0f * fabsf(u)), one_e = 1.0f + e;
        const float one_plus_t = (u >= 0.0f ? 2.0f : 2.0f * e) / one_e, sech2 = 4.0f * e / (one_e * one_e);
        y = b[i] * (0.5f * one_plus_t + 0.5f * x * sech2 * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x * x));
        break;
      }
      case 16: y = b[i] * (__fsub_rn(1.0f, x) * __fadd_rn(1.0f, x)); break;  // Note [Saturated tanh]
      default: y = b[i] * (x * (1.0f - x)); break;  // 17: sigmoid
    }
    out[i] = y;
  }
}

// Whole-tensor sum (op 0), max (1), dot (2), min (3) or mean (4) in two launches: stage 0, `groups` blocks
// each write the reduction of a strided share into partials[block]; stage 1, one block combines the
// partials into out[0]. min is -max(-x): negation is exact, so min needs no second block reduction.
extern "C" __global__ void tensor_reduce(const float* __restrict__ x, const float* __restrict__ y, float* partials, float* out, u32 n,
                                         int op, int stage, u32 groups) {
  const bool is_max = op == 1 || op == 3;
  float acc = is_max ? __int_as_float(0xff800000) : 0.0f;
  if (stage == 0) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += groups * blockDim.x) {
      const float v = op == 2 ? x[i] * y[i] : op == 3 ? -x[i] : x[i];
      acc = is_max ? fmaxf(acc, v) : acc + v;
    }
  } else {
    for (u32 i = threadIdx.x; i < groups; i += blockDim.x) acc = is_max ? fmaxf(acc, partials[i]) : acc + partials[i];
  }
  const float r = block_reduce(acc, is_max);
  if (threadIdx.x != 0) return;
  if (stage == 0) partials[blockIdx.x] = r;
  else out[0] = op == 3 ? -r : op == 4 ? r / static_cast<float>(n) : r;
}

// Whether (v, i) beats the best so far (bv, bi) for argmax, with the CPU's rules: a NaN beats any number,
// then the larger value, and among equals (or NaNs) the first index.
__device__ __forceinline__ bool arg_beats(float v, u32 i, float bv, u32 bi) {
  const bool vn = isnan(v), bn = isnan(bv);
  if (vn != bn) return vn;
  return vn || v == bv ? i < bi : v > bv;
}

// Whole-tensor argmax (or argmin: argmax of -x, negation keeps NaN) in two launches as tensor_reduce;
// partials holds `groups` values, then their `groups` indices. The comparisons are a total order, so the
// result does not depend on the order of combination: deterministic.
extern "C" __global__ void tensor_arg_reduce(const float* __restrict__ x, float* partials, int* out, u32 n, int is_min, int stage,
                                             u32 groups) {
  __shared__ float best_v[256];
  __shared__ u32 best_i[256];
  u32* partial_i = reinterpret_cast<u32*>(partials + groups);
  float bv = __int_as_float(0xff800000);
  u32 bi = 0xffffffffu;
  if (stage == 0) {
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += groups * blockDim.x) {
      const float v = is_min ? -x[i] : x[i];
      if (arg_beats(v, i, bv, bi)) bv = v, bi = i;
    }
  } else {
    for (u32 i = threadIdx.x; i < groups; i += blockDim.x)
      if (arg_beats(partials[i], partial_i[i], bv, bi)) bv = partials[i], bi = partial_i[i];
  }
  best_v[threadIdx.x] = bv, best_i[threadIdx.x] = bi;
  __syncthreads();
  for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && arg_beats(best_v[threadIdx.x + s], best_i[threadIdx.x + s], best_v[threadIdx.x], best_i[threadIdx.x]))
      best_v[threadIdx.x] = best_v[threadIdx.x + s], best_i[threadIdx.x] = best_i[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (stage == 0) partials[blockIdx.x] = best_v[0], partial_i[blockIdx.x] = best_i[0];
  else out[0] = static_cast<int>(best_i[0]);
}

// out[i] = x[i] + b[i % n] over total = rows * n elements (ops::add_bias).
extern "C" __global__ void tensor_add_bias_rows(const float* __restrict__ x, const float* __restrict__ b, float* out, u32 n, u32 total) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) out[i] = __fadd_rn(x[i], b[i % n]);
}

// One block per row of n: softmax (exp(x - max) / sum).
extern "C" __global__ void tensor_softmax_rows(const float* __restrict__ x, float* __restrict__ out, u32 n, u32 rows) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const float* xr = x + static_cast<u64>(row) * n;
  float* o = out + static_cast<u64>(row) * n;
  float m = __int_as_float(0xff800000);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, xr[i]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += expf(xr[i] - m);
  const float inv = 1.0f / block_reduce(s, false);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) o[i] = expf(xr[i] - m) * inv;
}

// One block per row of n: x / sqrt(mean(x^2) + eps) * w.
extern "C" __global__ void tensor_rmsnorm_rows(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out, u32 n,
                                               u32 rows, float eps) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const float* xr = x + static_cast<u64>(row) * n;
  float* o = out + static_cast<u64>(row) * n;
  float s = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += xr[i] * xr[i];
  const float r = 1.0f / sqrtf(block_reduce(s, false) / static_cast<float>(n) + eps);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) o[i] = xr[i] * r * w[i];
}

// One block per row of n: (x - mean) / sqrt(var + eps) * w + b (two passes: mean, then the variance).
extern "C" __global__ void tensor_layernorm_rows(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                                 float* __restrict__ out, u32 n, u32 rows, float eps) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const float* xr = x + static_cast<u64>(row) * n;
  float* o = out + static_cast<u64>(row) * n;
  float s = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
  const float mean = block_reduce(s, false) / static_cast<float>(n);
  float v = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) v += (xr[i] - mean) * (xr[i] - mean);
  const float r = 1.0f / sqrtf(block_reduce(v, false) / static_cast<float>(n) + eps);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) o[i] = (xr[i] - mean) * r * w[i] + b[i];
}

// One block per row of n: dx = y * (dy - sum(dy * y)), softmax's backward from its output.
extern "C" __global__ void tensor_softmax_backward_rows(const float* __restrict__ y, const float* __restrict__ dy, float* __restrict__ dx,
                                                        u32 n, u32 rows) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const u64 base = static_cast<u64>(row) * n;
  float s = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += dy[base + i] * y[base + i];
  s = block_reduce(s, false);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) dx[base + i] = y[base + i] * (dy[base + i] - s);
}

// f32 -> f16 bits, round to nearest even (cvt.rn).
extern "C" __global__ void tensor_f32_to_f16(const float* __restrict__ x, u16* __restrict__ out, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x[i]));
    out[i] = h;
  }
}

extern "C" __global__ void tensor_f16_to_f32(const u16* __restrict__ x, float* __restrict__ out, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = f16_to_f32(x[i]);
}

// f32 -> bf16 bits, round to nearest even in integer arithmetic, bit for bit the CPU's f32_to_bf16_bits
// (src/core/half.h): a NaN keeps its top half with the quiet bit set (adding could round it to infinity).
extern "C" __global__ void tensor_f32_to_bf16(const float* __restrict__ x, u16* __restrict__ out, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const u32 b = __float_as_uint(x[i]);
    out[i] = (b & 0x7fffffffu) > 0x7f800000u ? static_cast<u16>((b >> 16) | 0x40u) : static_cast<u16>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
}

extern "C" __global__ void tensor_bf16_to_f32(const u16* __restrict__ x, float* __restrict__ out, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = __uint_as_float(static_cast<u32>(x[i]) << 16);
}
