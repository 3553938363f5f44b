// Sampling steps on the device, each as realizar's CPU sampler computes it (realizar/src/sampler/sampler.cpp):
// the repetition penalty, greedy's argmax and the top-k candidates, so that a decode step copies back a
// token id or k candidates instead of the logits (Note [Sampling on the device], realizar/src/backends/cuda).
//
// Note [Sample keys]
// A candidate (logit, id) is ranked as one u64: the logit's order-preserving 32-bit key above ~id, so a
// larger key is a better candidate - the larger logit, then the lower id among equal logits, the CPU's
// Sampler::better. -0 takes +0's key (they compare equal on the CPU); NaN takes key 0, below -inf's. Ids
// are distinct, so no two keys tie, and 0 (key 0, id 0xffffffff) is below every real candidate: padding.
#include "prelude.cuh"

#define SAMPLE_TILE 2048  // top-k candidates per block (16 KB of keys in shared memory)

__device__ __forceinline__ bool is_nan_bits(u32 b) { return (b & 0x7fffffffu) > 0x7f800000u; }

__device__ __forceinline__ u64 sample_key(float x, u32 id) {
  u32 b = __float_as_uint(x);
  if ((b << 1) == 0) b = 0;  // -0 as +0
  u32 k = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  if (is_nan_bits(b)) k = 0;
  return (static_cast<u64>(k) << 32) | (0xffffffffu - id);
}

__device__ __forceinline__ u32 key_id(u64 key) { return 0xffffffffu - static_cast<u32>(key); }

__device__ __forceinline__ u64 max_u64(u64 a, u64 b) { return a > b ? a : b; }

__device__ __forceinline__ u64 block_max_u64(u64 v) {
  __shared__ u64 part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max_u64(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) part[w] = v;
  __syncthreads();
  v = lane < nw ? part[lane] : 0;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max_u64(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Greedy, pass 1: block b's best key over x[i], i = b * blockDim.x + t stepping by the grid, into best[b],
// and into bad[b] whether any of those values is infinite or NaN.
extern "C" __global__ void __launch_bounds__(256)
    argmax_partial(const float* __restrict__ x, int n, u64* __restrict__ best, int* __restrict__ bad) {
  u64 m = 0;
  int nonfinite = 0;
  const int step = gridDim.x * blockDim.x;
#pragma unroll 4
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const float v = x[i];
    m = max_u64(m, sample_key(v, static_cast<u32>(i)));
    nonfinite |= (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
  }
  m = block_max_u64(m);
  nonfinite = __syncthreads_or(nonfinite);
  if (threadIdx.x == 0) best[blockIdx.x] = m, bad[blockIdx.x] = nonfinite != 0;
}

// Greedy, pass 2 (one block over the parts of pass 1): out[0] = the id greedy picks (Note [Greedy ties
// and NaN], sampler.cpp: the best key's id, or 0 when x[0] is NaN), out[1] = 1 when any value is not finite.
extern "C" __global__ void __launch_bounds__(256) argmax_final(const float* __restrict__ x, const u64* __restrict__ best,
                                                               const int* __restrict__ bad, int parts, int* __restrict__ out) {
  u64 m = 0;
  int nonfinite = 0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) m = max_u64(m, best[i]), nonfinite |= bad[i];
  m = block_max_u64(m);
  nonfinite = __syncthreads_or(nonfinite);
  if (threadIdx.x == 0) {
    out[0] = is_nan_bits(__float_as_uint(x[0])) ? 0 : static_cast<int>(key_id(m));
    out[1] = nonfinite != 0;
  }
}

// x[ids[i]] for n_ids distinct ids, penalized as Sampler::penalize does: positive logits divided by
// penalty, the others multiplied by it (each one IEEE-rounded f32 operation, as on the CPU).
extern "C" __global__ void repeat_penalty(float* __restrict__ x, const int* __restrict__ ids, int n_ids, float penalty) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_ids) return;
  const float l = x[ids[i]];
  x[ids[i]] = l > 0.0f ? __fdiv_rn(l, penalty) : __fmul_rn(l, penalty);
}

// Sorts SAMPLE_TILE keys in shared memory, largest first (bitonic: each stage compares pairs (i, i + stride)
// and orders them descending or ascending by bit `size` of i; the last stage's direction is descending).
__device__ __forceinline__ void sort_keys_descending(u64* s) {
  for (int size = 2; size <= SAMPLE_TILE; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      for (int t = threadIdx.x; t < SAMPLE_TILE / 2; t += blockDim.x) {
        const int i = 2 * t - (t & (stride - 1)), j = i + stride;
        const bool descending = (i & size) == 0;
        const u64 a = s[i], b = s[j];
        if ((a < b) == descending) s[i] = b, s[j] = a;
      }
    }
  __syncthreads();
}

// A candidate as top_k_tiles' last round writes it (ops/sample.h: TopKCandidate).
struct TopKCandidate {
  float logit;
  int id;
};

// One round of top-k (Note [Device top-k], ops/sample.cpp): tile blockIdx.x of the candidates - the
// logits x[0, n) themselves in the first round (in null), else the keys in[0, n) an earlier round kept -
// sorted best first; its first k keys go to out[blockIdx.x * k, ...). A round of one tile is the last: it
// writes result = {any_nan, count = k, then k TopKCandidates (x[id], id) in order}. The first round sets
// any_nan to 1 when a logit is NaN (the launcher zeroes it).
extern "C" __global__ void __launch_bounds__(1024) top_k_tiles(const float* __restrict__ x, const u64* __restrict__ in, int n, int k,
                                                               u64* __restrict__ out, int* __restrict__ result) {
  __shared__ u64 s[SAMPLE_TILE];
  const int base = blockIdx.x * SAMPLE_TILE;
  int saw_nan = 0;
  for (int i = threadIdx.x; i < SAMPLE_TILE; i += blockDim.x) {
    const int j = base + i;
    u64 key = 0;
    if (j < n && in == nullptr) {
      const float v = x[j];
      key = sample_key(v, static_cast<u32>(j));
      saw_nan |= is_nan_bits(__float_as_uint(v));
    } else if (j < n) {
      key = in[j];
    }
    s[i] = key;
  }
  if (__syncthreads_or(saw_nan) && threadIdx.x == 0) result[0] = 1;
  sort_keys_descending(s);
  const int keep = min(k, n - base);
  if (gridDim.x == 1) {
    TopKCandidate* best = reinterpret_cast<TopKCandidate*>(result + 2);
    for (int i = threadIdx.x; i < keep; i += blockDim.x) {
      const u32 id = key_id(s[i]);
      best[i].logit = x[id];
      best[i].id = static_cast<int>(id);
    }
    if (threadIdx.x == 0) result[1] = keep;
  } else {
    for (int i = threadIdx.x; i < keep; i += blockDim.x) out[static_cast<u64>(blockIdx.x) * k + i] = s[i];
  }
}

// trueno's exp (src/cpu/kernels/math_impl.h, vexp) step for step: every operation separately rounded, the
// same clamp, magic-number rounding, Cody-Waite split, polynomial and two-halves scaling, so the result
// has the CPU tiers' bits (Note [No fused steps in element-wise math]). x is not NaN here.
__device__ __forceinline__ float exp_like_cpu(float x) {
  float xc = x > -104.0f ? x : -104.0f;
  xc = xc < 89.0f ? xc : 89.0f;
  const float n = __fsub_rn(__fadd_rn(__fmul_rn(xc, 1.44269504088896341f), 12582912.0f), 12582912.0f);
  float r = __fadd_rn(__fmul_rn(n, -0.693359375f), xc);
  r = __fadd_rn(__fmul_rn(n, 2.12194440e-4f), r);
  const float c[6] = {5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f, 8.3334519073e-3f, 1.3981999507e-3f, 1.9875691500e-4f};
  float p = c[5];
#pragma unroll
  for (int i = 4; i >= 0; --i) p = __fadd_rn(__fmul_rn(p, r), c[i]);
  p = __fadd_rn(__fmul_rn(p, __fmul_rn(r, r)), __fadd_rn(r, 1.0f));
  const float n1 = __fsub_rn(__fadd_rn(__fmul_rn(n, 0.5f), 12582912.0f), 12582912.0f);
  const float n2 = __fsub_rn(n, n1);
  const float s1 = __uint_as_float(static_cast<u32>(static_cast<int>(n1) + 127) << 23);
  const float s2 = __uint_as_float(static_cast<u32>(static_cast<int>(n2) + 127) << 23);
  return __fmul_rn(__fmul_rn(p, s1), s2);
}

#define DRAW_BLOCK 256  // Sampler::kDrawBlock

// Note [Temperature alone] (realizar's sampler.cpp), on the device: out[0] = the id
// Sampler::pick_in_id_order picks from w[i] = exp((x[i] - max) * inv_t) and u. One block: the max, the
// weights (into w), each DRAW_BLOCK ids' sum in double in id order (into sums), then one thread sums the
// sums and walks, exactly as the host does. out[0] = -1 when a logit is NaN or the max is not finite (the
// caller checked the step's finiteness scan first, so that means a bug).
extern "C" __global__ void __launch_bounds__(1024) temperature_draw(const float* __restrict__ x, int n, float inv_t, double u,
                                                                    float* __restrict__ w, double* __restrict__ sums,
                                                                    int* __restrict__ out) {
  __shared__ float part[32];
  float m = -__int_as_float(0x7f800000);
  int bad = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = x[i];
    bad |= v != v;
    m = v > m ? v : m;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float t = __shfl_xor_sync(0xffffffffu, m, o);
    m = t > m ? t : m;
  }
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = m;
  bad = __syncthreads_or(bad);
  m = part[0];
  for (int i = 1; i < (blockDim.x >> 5); ++i) m = part[i] > m ? part[i] : m;
  if (bad || !isfinite(m)) {
    if (threadIdx.x == 0) out[0] = -1;
    return;
  }
  for (int i = threadIdx.x; i < n; i += blockDim.x) w[i] = exp_like_cpu(__fmul_rn(__fsub_rn(x[i], m), inv_t));
  __syncthreads();
  const int blocks = (n + DRAW_BLOCK - 1) / DRAW_BLOCK;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    double s = 0.0;
    const int end = min(n, (b + 1) * DRAW_BLOCK);
    for (int i = b * DRAW_BLOCK; i < end; ++i) s = __dadd_rn(s, static_cast<double>(w[i]));
    sums[b] = s;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  double total = 0.0;
  for (int b = 0; b < blocks; ++b) total = __dadd_rn(total, sums[b]);
  double r = __dmul_rn(u, total);
  for (int b = 0; b < blocks; ++b) {
    if (!(r < sums[b])) {
      r = __dsub_rn(r, sums[b]);
      continue;
    }
    const int end = min(n, (b + 1) * DRAW_BLOCK);
    for (int i = b * DRAW_BLOCK; i < end; ++i) {
      const double wi = static_cast<double>(w[i]);
      if (wi == 0.0) continue;
      if (r < wi) {
        out[0] = i;
        return;
      }
      r = __dsub_rn(r, wi);
    }
  }
  for (int i = n - 1; i >= 0; --i)
    if (w[i] != 0.0f) {
      out[0] = i;
      return;
    }
  out[0] = 0;
}
