// Shared by every trueno CUDA module (compiled by NVRTC, which has no standard headers by default).
#pragma once

typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ float f16_to_f32(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

// The first statement of every kernel launched with launch_overlapped (Note [Overlapped launches] in
// src/cuda/context.h): lets the next kernel start launching, then waits for the previous one.
__device__ __forceinline__ void overlap_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void overlap_wait() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void overlap_prologue() {
  overlap_launch();
  overlap_wait();
}

// Note [Weights before the wait]
// A quantized GEMV's weights are constant while a model runs (no kernel writes a quantized matrix; uploads
// are copies, which the kernels after them wait for in full), so
// its blocks issue their first weight loads between overlap_launch() and overlap_wait(): blocks scheduled
// while the previous kernels still run (Note [Overlapped launches]) stream their weights then, and only
// the activations and y wait. Those kernels begin with overlap_launch() and call overlap_wait() before
// any other read (a test checks both). TRUENO_GEMV_EARLY=0 (a tuning knob) waits first, as before.
#ifndef TRUENO_GEMV_EARLY
#define TRUENO_GEMV_EARLY 1
#endif
// How the quantized GEMVs load weights (a tuning knob): 2 (default) streaming loads, ld.global.cs: read
// once, evicted first, so the activations every warp reads stay cached; 1 L2 only (ld.global.cg); 3 plain.
// Measured on the H200 (tg128, two rounds): streaming everywhere 7B 419.8 / 418.4 tok/s, Q8_0 249.3 / 248.6;
// plain loads in the Q6_K and Q8_0 GEMVs (as before) 411.4 / 413.0 and 240.4 / 241.0; L2 only 341.6 / 341.1
// and 243.7 / 242.9.
#ifndef TRUENO_GEMV_WEIGHT_LOAD
#define TRUENO_GEMV_WEIGHT_LOAD 2
#endif
template <typename T>
__device__ __forceinline__ T load_weight(const T* p) {
  if constexpr (TRUENO_GEMV_WEIGHT_LOAD == 1) return __ldcg(p);
  else if constexpr (TRUENO_GEMV_WEIGHT_LOAD == 2) return __ldcs(p);
  else return *p;
}

// Called just before a GEMV's first weight loads (after = false) and just after them (after = true): waits
// in one of the two places.
__device__ __forceinline__ void gemv_wait(bool after) {
  if (after == (TRUENO_GEMV_EARLY != 0)) overlap_wait();
}

// sin and cos of the rope angle of pair i at position p: theta = p * theta_scale^i, built by repeated f32
// multiplication as the CPU builds it, divided by freqs[i] when freqs is not null.
__device__ __forceinline__ void rope_sincos(int p, int i, float theta_scale, const float* __restrict__ freqs, float& sn, float& cs) {
  float theta = static_cast<float>(p);
  for (int k = 0; k < i; ++k) theta *= theta_scale;
  if (freqs != nullptr) theta /= freqs[i];
  sincosf(theta, &sn, &cs);
#ifdef TRUENO_FAULT_ROPE  // test-only fault injection (the parity gate must reject it): from position 4 the
  // rotation also scales by 16 (attention then fixes on those positions), as a miscompiled kernel might
  const float fault = p >= 4 ? 16.0f : 1.0f;
  sn *= fault, cs *= fault;
#endif
}

// GEMV shape knobs (TRUENO_CUDA_DEFINES, src/cuda/nvrtc.h; the launchers read the same values): warps
// per thread block of every GEMV kernel, rows per warp of the quantized ones. Defaults: the measured best.
#ifndef TRUENO_GEMV_WARPS  // 2: on the H200 (tg128) 1-2% faster than 4 (a block retires sooner), 8 5-8% slower
#define TRUENO_GEMV_WARPS 2
#endif
#ifndef TRUENO_GEMV_ROWS  // Q4_K and Q5_K (gemv_q6_k: TRUENO_Q6K_ROWS)
#define TRUENO_GEMV_ROWS 4
#endif

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the 16 lanes of each half-warp segment that `width` lanes share (width a power of two <= 32).
__device__ __forceinline__ int segment_sum(int v, int width) {
  for (int o = width / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float round_to_f16(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return f16_to_f32(h);
}

__device__ __forceinline__ u16 f32_to_f16_bits(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

// Sum over the block's threads (blockDim.x a multiple of 32, at most 1024); every thread gets the sum.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float part[32];
  v = warp_sum(v);
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) part[w] = v;
  __syncthreads();
  v = lane < nw ? part[lane] : 0.0f;
  return warp_sum(v);
}

// Sum over the block of x[i]^2, i < n (every thread gets it). 16-byte loads, four in flight per thread,
// when x allows: one memory round trip instead of n / blockDim dependent ones (the decode RMSNorms are
// latency-bound, 4096 floats over 256 threads).
__device__ __forceinline__ float block_sum_squares(const float* __restrict__ x, int n) {
  float ss = 0.0f;
  if ((n & 3) == 0 && (reinterpret_cast<u64>(x) & 15) == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
#pragma unroll 4
    for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
      const float4 v = x4[i];
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += x[i] * x[i];
  }
  return block_sum(ss);
}

__device__ __forceinline__ float block_max(float v) {
  __shared__ float part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) part[w] = v;
  __syncthreads();
  v = lane < nw ? part[lane] : -__int_as_float(0x7f800000);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// silu(x) * w of four values, each as the scalar swiglu kernels compute it (the same bits).
__device__ __forceinline__ float4 swiglu4(const float4 x, const float4 w) {
  float4 y;
  y.x = x.x / (1.0f + expf(-x.x)) * w.x;
  y.y = x.y / (1.0f + expf(-x.y)) * w.y;
  y.z = x.z / (1.0f + expf(-x.z)) * w.z;
  y.w = x.w / (1.0f + expf(-x.w)) * w.w;
  return y;
}

// One row of rmsnorm: yr = xr * (1 / sqrt(mean(xr^2) + eps)) * w, by the whole block; returns this
// thread's largest |y| (rmsnorm ignores it; fp8_ops' rmsnorm_amax takes the block's). Rows of 4k values at
// 16-byte-aligned addresses go four values per load and store, each value computed as in the scalar loop.
__device__ __forceinline__ float rmsnorm_row(const float* __restrict__ xr, const float* __restrict__ w, float eps, float* __restrict__ yr,
                                             int n) {
  const float ss = block_sum_squares(xr, n);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  float m = 0.0f;
  if ((n & 3) == 0 && ((reinterpret_cast<u64>(xr) | reinterpret_cast<u64>(yr) | reinterpret_cast<u64>(w)) & 15) == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    const float4* w4 = reinterpret_cast<const float4*>(w);
    float4* y4 = reinterpret_cast<float4*>(yr);
    for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
      const float4 a = x4[i], b = w4[i];
      float4 o;
      o.x = (a.x * scale) * b.x, o.y = (a.y * scale) * b.y, o.z = (a.z * scale) * b.z, o.w = (a.w * scale) * b.w;
      y4[i] = o;
      m = fmaxf(fmaxf(m, fmaxf(fabsf(o.x), fabsf(o.y))), fmaxf(fabsf(o.z), fabsf(o.w)));
    }
    return m;
  }
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float y = (xr[i] * scale) * w[i];
    yr[i] = y;
    m = fmaxf(m, fabsf(y));
  }
  return m;
}

// The GEMV kernels take up to three matrices of the same type and width, one per blockIdx.y (q, k and v;
// gate and up), in one launch, and with accumulate add W x to y (the residual) instead of storing it.
struct GemvTargets {
  const u8* w[3];
  float* y[3];
  int rows[3];
};

__device__ __forceinline__ void keep_larger(float& m, int& idx, float om, int oi) {
  if (om > m || (om == m && oi < idx)) m = om, idx = oi;
}

// Quantizes Q8_K block blockIdx.x: thread t (of 256) holds element t's value v. Writes q[256 * b + t],
// d[b], bsums[16 * b + t / 16], the values the CPU computes (quant_q8_k in src/quant/quantize_ref.cpp):
// a = the element of largest magnitude (the first of equals, never NaN), q = min(127, rint(x * (-127 / a))),
// d = 1 / (-127 / a).
__device__ __forceinline__ void quantize_block_q8_k(float v, i8* __restrict__ q, float* __restrict__ d, i16* __restrict__ bsums) {
  __shared__ float s_mag[8];
  __shared__ int s_idx[8];
  __shared__ float s_val[8];
  __shared__ float s_a;
  const int b = blockIdx.x, t = threadIdx.x;
  float m = v != v ? -1.0f : fabsf(v);
  int idx = t;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) keep_larger(m, idx, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, idx, o));
  const float chosen = __shfl_sync(0xffffffffu, v, idx & 31);  // the signed value of the warp's winner
  __syncthreads();
  if ((t & 31) == 0) s_mag[t >> 5] = m, s_idx[t >> 5] = idx, s_val[t >> 5] = chosen;
  __syncthreads();
  {  // every warp reduces the eight warps' winners (only warp 0's result is kept): uniform control flow,
     // which decy's --warp32 needs (Note [Emulated warps], decy/glsl_support.cpp); 2 shuffles more per warp
    const int lane = t & 31;
    m = lane < 8 ? s_mag[lane] : -1.0f;
    idx = lane < 8 ? s_idx[lane] : 1 << 30;
    int who = lane;
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) {
      const float om = __shfl_xor_sync(0xffffffffu, m, o);
      const int oi = __shfl_xor_sync(0xffffffffu, idx, o), ow = __shfl_xor_sync(0xffffffffu, who, o);
      if (om > m || (om == m && oi < idx)) m = om, idx = oi, who = ow;
    }
    if (t == 0) s_a = m > 0.0f ? s_val[who] : 0.0f;
  }
  __syncthreads();
  const float a = s_a;
  int qi = 0;
  // __fdiv_rn: what / is under NVRTC's --prec-div=true; decy then keeps it correctly rounded on Vulkan
  if (a != 0.0f) qi = min(127, __float2int_rn(__fdiv_rn(-127.0f, a) * v));
  q[b * 256 + t] = static_cast<i8>(qi);
  const int s = segment_sum(qi, 16);
  if ((t & 15) == 0) bsums[b * 16 + t / 16] = static_cast<i16>(s);
  if (t == 0) d[b] = a != 0.0f ? __fdiv_rn(1.0f, __fdiv_rn(-127.0f, a)) : 0.0f;
}
