// Per-tensor FP8 E4M3 quantization for the cuBLASLt prefill products (--prefill-precision fp8):
//   amax_f32, amax_f16   the largest |x| of a tensor (as the bits of a non-negative float, combined across
//                        blocks by atomicMax; the launcher zeroes it first)
//   fp8_from_f32/_f16    scale = amax / 448 (E4M3's largest finite value; 1 when amax is 0) and
//                        q = E4M3(x / scale): round to nearest even, saturating to +-448
//   rmsnorm_amax, swiglu_amax
//                        layer_ops' rmsnorm and swiglu (the same bits) that also leave the amax of what they
//                        wrote, so the FP8 prompt pass casts their output without an amax pass of its own
//   amax_f32_v4, fp8_from_f32_v4
//                        the same on 16-byte-aligned f32 tensors of 4k values, four values per load (the
//                        prompt pass's activations): one value per thread and load kept too few bytes in
//                        flight, ~8 us for 8-22 MB where the bytes take ~3 (Note [Vector FP8 casts])
// The GEMM multiplies by the two scales again (cuBLASLt's A/B scale pointers).
#include "prelude.cuh"

namespace {

__device__ __forceinline__ u8 to_e4m3(float v) {
#if __CUDA_ARCH__ >= 890
  u16 packed;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(packed) : "f"(0.0f), "f"(v));  // v -> the low byte
  return static_cast<u8>(packed & 0xFF);
#else  // no FP8 conversion instruction before sm_89: the same rounding in arithmetic
  const u8 sign = signbit(v) ? 0x80 : 0;
  const float a = fabsf(v);
  if (!(a < 448.0f)) return sign | 0x7E;
  int e;
  frexpf(a, &e);
  const float step = ldexpf(1.0f, max(e - 1, -6) - 3), r = rintf(a / step) * step;
  if (r >= 448.0f) return sign | 0x7E;
  if (r == 0.0f) return sign;
  frexpf(r, &e);
  if (e - 1 < -6) return sign | static_cast<u8>(r * 512.0f);
  return sign | static_cast<u8>((e + 6) << 3) | static_cast<u8>((ldexpf(r, 1 - e) - 1.0f) * 8.0f);
#endif
}

__device__ __forceinline__ float scale_of(const u32* amax) {
  const float a = __uint_as_float(*amax);
  return a > 0.0f ? a / 448.0f : 1.0f;
}

template <class Load>
__device__ __forceinline__ void amax(u64 n, u32* out, Load load) {
  float m = 0.0f;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x)
    m = fmaxf(m, fabsf(load(i)));
  m = block_max(m);
  if (threadIdx.x == 0) atomicMax(out, __float_as_uint(m));
}

template <class Load>
__device__ __forceinline__ void quantize(u64 n, const u32* amax_bits, u8* out, float* scale, Load load) {
  const float s = scale_of(amax_bits);
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<u64>(gridDim.x) * blockDim.x)
    out[i] = to_e4m3(load(i) / s);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256) amax_f32(const float* __restrict__ x, u64 n, u32* __restrict__ out) {
  amax(n, out, [&](u64 i) { return x[i]; });
}

extern "C" __global__ void __launch_bounds__(256) amax_f16(const u16* __restrict__ x, u64 n, u32* __restrict__ out) {
  amax(n, out, [&](u64 i) { return f16_to_f32(x[i]); });
}

extern "C" __global__ void fp8_from_f32(const float* __restrict__ x, u64 n, const u32* __restrict__ amax_bits, u8* __restrict__ out,
                                        float* __restrict__ scale) {
  quantize(n, amax_bits, out, scale, [&](u64 i) { return x[i]; });
}

extern "C" __global__ void fp8_from_f16(const u16* __restrict__ x, u64 n, const u32* __restrict__ amax_bits, u8* __restrict__ out,
                                        float* __restrict__ scale) {
  quantize(n, amax_bits, out, scale, [&](u64 i) { return f16_to_f32(x[i]); });
}

// Note [Vector FP8 casts]
// The max of the |x| does not depend on the order it is taken in, and each byte is the scalar kernel's
// conversion of the same value, so the vector kernels' scale and bytes equal the scalar ones' bit for bit
// (CudaGpu.Fp8QuantizationMatchesTheCpu runs both). out packs four E4M3 bytes per word, value 4i + j in
// byte j (little-endian: the byte order of the scalar kernel's output).
extern "C" __global__ void __launch_bounds__(256) amax_f32_v4(const float4* __restrict__ x, u64 n4, u32* __restrict__ out) {
  float m = 0.0f;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n4; i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    m = fmaxf(fmaxf(m, fmaxf(fabsf(v.x), fabsf(v.y))), fmaxf(fabsf(v.z), fabsf(v.w)));
  }
  m = block_max(m);
  if (threadIdx.x == 0) atomicMax(out, __float_as_uint(m));
}

extern "C" __global__ void fp8_from_f32_v4(const float4* __restrict__ x, u64 n4, const u32* __restrict__ amax_bits, u32* __restrict__ out,
                                           float* __restrict__ scale) {
  const float s = scale_of(amax_bits);
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n4; i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    out[i] = static_cast<u32>(to_e4m3(v.x / s)) | static_cast<u32>(to_e4m3(v.y / s)) << 8 | static_cast<u32>(to_e4m3(v.z / s)) << 16 |
             static_cast<u32>(to_e4m3(v.w / s)) << 24;
  }
}

extern "C" __global__ void __launch_bounds__(256) rmsnorm_amax(const float* __restrict__ x, const float* __restrict__ w, float eps,
                                                               float* __restrict__ out, int n, u32* __restrict__ amax) {
  const float m = block_max(rmsnorm_row(x + static_cast<u64>(blockIdx.x) * n, w, eps, out + static_cast<u64>(blockIdx.x) * n, n));
  if (threadIdx.x == 0) atomicMax(amax, __float_as_uint(m));
}

// g = silu(g) * u over n values (grid-stride; four at a time when n % 4 == 0 and both are 16-byte
// aligned), each computed as layer_ops' swiglu computes it; amax = the largest |g| written.
extern "C" __global__ void __launch_bounds__(256) swiglu_amax(float* __restrict__ g, const float* __restrict__ u, u64 n,
                                                              u32* __restrict__ amax) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  float m = 0.0f;
  if ((n & 3) == 0 && ((reinterpret_cast<u64>(g) | reinterpret_cast<u64>(u)) & 15) == 0) {
    float4* g4 = reinterpret_cast<float4*>(g);
    const float4* u4 = reinterpret_cast<const float4*>(u);
    for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n / 4; i += stride) {
      const float4 y = swiglu4(g4[i], u4[i]);
      g4[i] = y;
      m = fmaxf(fmaxf(m, fmaxf(fabsf(y.x), fabsf(y.y))), fmaxf(fabsf(y.z), fabsf(y.w)));
    }
  } else {
    for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < n; i += stride) {
      const float x = g[i];
      const float y = x / (1.0f + expf(-x)) * u[i];
      g[i] = y;
      m = fmaxf(m, fabsf(y));
    }
  }
  m = block_max(m);
  if (threadIdx.x == 0) atomicMax(amax, __float_as_uint(m));
}
