// decy's end-to-end kernels, written as src/cuda/kernels/*.cu are: translated at build time (decy ->
// GLSL -> glslc -> SPIR-V) and run on a Vulkan device by decy_vulkan_test.cpp against a CPU reference under
// contracts/gpu/decy.yaml.
#ifndef ROW_SUM_THREADS
#define ROW_SUM_THREADS 256
#endif

// y[r][i] += b[i] for the row r = blockIdx.y (prefill_ops.cu's add_rows, without the 64-bit row offset).
extern "C" __global__ void add_rows_bias(float* __restrict__ y, const float* __restrict__ b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[blockIdx.y * n + i] += b[i];
}

__device__ __forceinline__ float silu(float g) { return g / (1.0f + expf(-g)); }

// out[i] = silu(gate[i]) * up[i], grid-stride.
extern "C" __global__ void swiglu(const float* __restrict__ gate, const float* __restrict__ up, float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = silu(gate[i]) * up[i];
}

// out[r] = sum of row r of x (rows of n), one block of ROW_SUM_THREADS threads per row: a strided partial
// sum per thread, then a tree in shared memory.
extern "C" __global__ void row_sum_shared(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float partial[ROW_SUM_THREADS];
  const int r = blockIdx.x, t = threadIdx.x;
  x += r * n;
  float s = 0.0f;
  for (int i = t; i < n; i += blockDim.x) s += x[i];
  partial[t] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[r] = partial[0];
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The same sum, reduced by warp shuffles: each warp's sum into shared memory, then the first warp sums
// those (at most warpSize warps per block: blockDim.x <= warpSize * warpSize). out[r] scaled by `scale`.
extern "C" __global__ void row_sum_warp(const float* __restrict__ x, float* __restrict__ out, int n, float scale) {
  __shared__ float warps[32];
  const int r = blockIdx.x, t = threadIdx.x, lane = t % warpSize, warp = t / warpSize;
  const float* row = x + r * n;
  float s = 0.0f;
  for (int i = t; i < n; i += blockDim.x) s += row[i];
  s = warp_sum(s);
  if (lane == 0) warps[warp] = s;
  __syncthreads();
  if (warp == 0) {
    const int nw = blockDim.x / warpSize;
    float v = lane < nw ? warps[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) out[r] = v * scale;
  }
}

// q[i] = x[i] / m and r[i] = x[i] % m with C's signed semantics (truncation toward zero, the remainder's
// sign that of x[i]), negative values included (Note [Signed remainder] in decy/glsl.cpp).
extern "C" __global__ void div_rem(const int* __restrict__ x, int* __restrict__ q, int* __restrict__ r, int m, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  q[i] = x[i] / m;
  r[i] = x[i] % m;
}

// Integer and control-flow constructs WGSL spells differently (docs/DECY.md, "WGSL"): a do-while, ?:,
// unsigned negation, shifts by an int, an arithmetic >>=, and a helper that reads an index variable through
// a view. The CPU reference: decy/mixed_ops_ref.h.
__device__ __forceinline__ unsigned mix_bits(const unsigned* p, unsigned v, int s) {
  return (p[threadIdx.x % 4] ^ (v << s)) + (v >> (31 - s));
}
extern "C" __global__ void mixed_ops(const unsigned* __restrict__ x, unsigned* __restrict__ y, int* __restrict__ z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = x[i];
  int steps = 0;
  do {
    v = v * 1664525u + 1013904223u;
    ++steps;
  } while ((v & 7u) != 0u && steps < 20);
  const unsigned* row = x + (i / 4) * 4;
  y[i] = mix_bits(row, -v, i % 31);
  int s = (int)(x[i] >> 1);
  s = s % 2 == 0 ? -s : s;
  s >>= 8;  // |s * steps| < 2^31
  z[i] = s * steps;
}

// 8-bit buffers (Note [16-bit values] in glsl_support.cpp: u8 / i8 elements, 32-bit values): i8 quants times a
// per-32 scale plus a u8 nibble (two per byte, low first), requantized to i8 by __float2int_rn, and
// every other byte of w + 17 stored back (wrapping modulo 256 as C's conversion to u8 does).
extern "C" __global__ void bytes_8bit(const i8* __restrict__ q, const u8* __restrict__ w, const float* __restrict__ d,
                                      float* __restrict__ out, i8* __restrict__ qo, u8* __restrict__ wo, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u8 b = w[i / 2];
  const int nib = i % 2 == 0 ? b & 0xF : b >> 4;
  const float v = d[i / 32] * static_cast<float>(q[i]) + static_cast<float>(nib);
  out[i] = v;
  qo[i] = static_cast<i8>(max(-128, min(127, __float2int_rn(v * 3.0f))));
  if (i % 2 == 0) wo[i / 2] = static_cast<u8>(b + 17);
}

// Vector types (Note [Vector types] in glsl_support.cpp), one thread per row r: the row's sum of squares through
// 16-byte loads (reinterpret_cast<const float4*>) when n and the row's address allow, as the prelude's
// block_sum_squares, else scalar loads; a uint4 buffer read and a make_uint4 written into a u16 buffer as
// one 16-byte store (8 halves per row), as dequant_f16.cu's each_element.
extern "C" __global__ void vectors(const float* __restrict__ x, const uint4* __restrict__ u, float* __restrict__ sums,
                                   u16* __restrict__ h, int rows, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* row = x + r * n;
  float ss = 0.0f;
  if ((n & 3) == 0 && (reinterpret_cast<u64>(row) & 15) == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    for (int i = 0; i < n / 4; ++i) {
      const float4 v = row4[i];
      ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
    for (int i = 0; i < n; ++i) ss += row[i] * row[i];
  }
  sums[r] = ss;
  const uint4 w = u[r];
  *reinterpret_cast<uint4*>(h + static_cast<u64>(r) * 8) = make_uint4(w.y, w.x, w.w ^ w.z, w.z + 1u);
}

// __syncthreads_or, twice in a row (the second call must not see the first's result): per block, whether
// any thread's value is negative, and whether the block holds index n + 1.
extern "C" __global__ void block_any(const float* __restrict__ x, int n, int* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int neg = i < n && x[i] < 0.0f;
  const int any = __syncthreads_or(neg);
  const int past = __syncthreads_or(i == n + 1);
  if (threadIdx.x == 0) out[2 * blockIdx.x] = any, out[2 * blockIdx.x + 1] = past;
}

// __dp4a: c plus the dot product of the four signed bytes of a and b (Note [dp4a] in decy/glsl_support.cpp).
extern "C" __global__ void dp4a(const int* __restrict__ a, const int* __restrict__ b, int* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __dp4a(a[i], b[i], out[i]);
}
