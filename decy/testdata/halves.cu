// CUDA's half types through decy (Note [Half types], decy/glsl_support.cpp), run by decy_halves_test.cpp:
// __half arithmetic and comparisons (intrinsics and operators), __half2 pairs, __nv_bfloat16 conversions.
__global__ void halves(const half* __restrict__ a, const half* __restrict__ b, half* __restrict__ out, const half2* __restrict__ p,
                       half2* __restrict__ p_out, const float* __restrict__ x, __nv_bfloat16* __restrict__ bf, float* __restrict__ back, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const half u = a[i], v = b[i];
  out[6 * i] = u + v;
  out[6 * i + 1] = __hsub(u, v);
  out[6 * i + 2] = u * v;
  out[6 * i + 3] = __hdiv(u, v);
  out[6 * i + 4] = __hneg(u);
  out[6 * i + 5] = u < v ? __float2half(1.0f) : (u == v ? __float2half(0.5f) : __float2half(0.0f));
  const half2 q = p[i];
  p_out[3 * i] = __hadd2(q, __floats2half2_rn(__half2float(u), __half2float(v)));
  p_out[3 * i + 1] = __hmul2(q, q);
  p_out[3 * i + 2] = __halves2half2(__high2half(q), __low2half(q));
  bf[i] = __float2bfloat16(x[i]);
  back[i] = __bfloat162float(bf[i]) + __low2float(q) - __high2float(q);
}
