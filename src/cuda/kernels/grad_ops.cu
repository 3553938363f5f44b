// The backward ops on CUDA (trueno::grad on DeviceTensor; launchers in src/cuda/tensor_ops.cpp): norms,
// cross-entropy, RoPE, embedding, attention's causal softmax, AdamW. Row kernels take 256 threads per
// block (block_reduce); the formulas and their order are the host's (src/grad/grad.cpp). Parameter
// gradients loop over the rows in order, one thread per column: Note [Deterministic parameter gradients]
// (src/api/device_grad.cpp).
#include "prelude.cuh"
#include "block_reduce.cuh"

// One block per row of n: stats[row] = (mean, 1 / sqrt(var + eps)) for layernorm, (0, 1 / rms) for rmsnorm.
extern "C" __global__ void grad_norm_stats_rows(const float* __restrict__ x, float* __restrict__ stats, u32 n, u32 rows, float eps,
                                                int layer) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const float* xr = x + static_cast<u64>(row) * n;
  float mean = 0.0f, s = 0.0f;
  if (layer) {
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    mean = block_reduce(s, false) / static_cast<float>(n);
    s = 0.0f;
  }
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += (xr[i] - mean) * (xr[i] - mean);
  const float r = 1.0f / sqrtf(block_reduce(s, false) / static_cast<float>(n) + eps);
  if (threadIdx.x == 0) stats[2 * row] = mean, stats[2 * row + 1] = r;
}

// One block per row: dx with g = dy * w. rmsnorm: r g - x r^3 sum(g x) / n; layernorm, xh = (x - mean) r:
// r (g - mean(g) - xh sum(g xh) / n).
extern "C" __global__ void grad_norm_dx_rows(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ dy,
                                             const float* __restrict__ stats, float* __restrict__ dx, u32 n, u32 rows, int layer) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const u64 base = static_cast<u64>(row) * n;
  const float mean = stats[2 * row], r = stats[2 * row + 1], fn = static_cast<float>(n);
  float sg = 0.0f, sgx = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
    const float g = dy[base + i] * w[i];
    sg += g, sgx += layer ? g * ((x[base + i] - mean) * r) : g * x[base + i];
  }
  sgx = block_reduce(sgx, false);
  if (layer) {
    const float mg = block_reduce(sg, false) / fn, mgx = sgx / fn;
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
      const float xh = (x[base + i] - mean) * r;
      dx[base + i] = r * (dy[base + i] * w[i] - mg - xh * mgx);
    }
  } else {
    const float k = r * r * r * sgx / fn;
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) dx[base + i] = r * (dy[base + i] * w[i]) - k * x[base + i];
  }
}

// One thread per column j: dw[j] (+)= sum over rows of dy xh (rmsnorm: dy x r), db[j] (+)= sum of dy.
extern "C" __global__ void grad_norm_params_cols(const float* __restrict__ x, const float* __restrict__ dy, const float* __restrict__ stats,
                                                 float* __restrict__ dw, float* __restrict__ db, u32 n, u32 rows, int layer, int accumulate) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  float aw = accumulate ? dw[j] : 0.0f, ab = accumulate && layer ? db[j] : 0.0f;
  for (u32 row = 0; row < rows; ++row) {
    const u64 at = static_cast<u64>(row) * n + j;
    const float mean = stats[2 * row], r = stats[2 * row + 1];
    aw += layer ? dy[at] * ((x[at] - mean) * r) : dy[at] * x[at] * r;
    ab += dy[at];
  }
  dw[j] = aw;
  if (layer) db[j] = ab;
}

// One block per row of n classes: ls = x - max - log(sum(exp(x - max))); dlogits = scale (exp(ls) -
// onehot(target)), loss[row] = -ls[target] (NaN for a target outside the classes).
extern "C" __global__ void grad_cross_entropy_rows(const float* __restrict__ logits, const i32* __restrict__ targets,
                                                   float* __restrict__ dlogits, float* __restrict__ loss, u32 n, u32 rows, float scale) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const u64 base = static_cast<u64>(row) * n;
  float m = __int_as_float(0xff800000);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, logits[base + i]);
  m = block_reduce(m, true);
  float s = 0.0f;
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) s += expf(logits[base + i] - m);
  const float l = logf(block_reduce(s, false));
  const i32 t = targets[row];
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
    const float ls = (logits[base + i] - m) - l;
    dlogits[base + i] = scale * (expf(ls) - (static_cast<i32>(i) == t ? 1.0f : 0.0f));
    if (static_cast<i32>(i) == t) loss[row] = -ls;
  }
  if (threadIdx.x == 0 && (t < 0 || static_cast<u32>(t) >= n)) loss[row] = __int_as_float(0x7fc00000);
}

// RoPE's backward: dy rotated back. One thread per (row, head, j): j < rope_dim / 2 the pair j (angle
// (pos + row) base^(-2j / rope_dim) in f64, as the host), the rest copy the unrotated tail.
extern "C" __global__ void grad_rope_rows(const float* __restrict__ dy, float* __restrict__ dx, u32 rows, u32 heads, u32 head_dim,
                                          u32 rope_dim, u32 pos, float base, int neox) {
  const u32 half = rope_dim / 2, per_head = half + (head_dim - rope_dim);
  const u64 t = static_cast<u64>(blockIdx.x + blockIdx.y * gridDim.x) * blockDim.x + threadIdx.x;
  if (t >= static_cast<u64>(rows) * heads * per_head) return;
  const u64 head = t / per_head;  // over every row's heads
  const u32 j = static_cast<u32>(t % per_head), row = static_cast<u32>(head / heads);
  const float* g = dy + head * head_dim;
  float* o = dx + head * head_dim;
  if (j >= half) {
    o[rope_dim + (j - half)] = g[rope_dim + (j - half)];
    return;
  }
  const double theta = static_cast<double>(pos + row) * pow(static_cast<double>(base), -2.0 * j / static_cast<double>(rope_dim));
  const float c = static_cast<float>(cos(theta)), s = static_cast<float>(sin(theta));
  const u32 a = neox ? j : 2 * j, b = neox ? j + half : 2 * j + 1;
  const float g0 = g[a], g1 = g[b];
  o[a] = g0 * c + g1 * s, o[b] = -g0 * s + g1 * c;
}

// One thread per column j of the table gradient [rows][dim]: zeroed unless accumulating, then the tokens
// in order add their dy row (ids outside the table are skipped).
extern "C" __global__ void grad_embedding_cols(const i32* __restrict__ ids, const float* __restrict__ dy, float* __restrict__ dtable,
                                               u32 tokens, u32 dim, u32 rows, int accumulate) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= dim) return;
  if (!accumulate)
    for (u32 r = 0; r < rows; ++r) dtable[static_cast<u64>(r) * dim + j] = 0.0f;
  for (u32 t = 0; t < tokens; ++t) {
    const i32 id = ids[t];
    if (id < 0 || static_cast<u32>(id) >= rows) continue;
    dtable[static_cast<u64>(id) * dim + j] += dy[static_cast<u64>(t) * dim + j];
  }
}

// db[j] (+)= sum over the rows of dy[r][j], one thread per column adding the rows in order (Note
// [Deterministic parameter gradients], src/api/device_grad.cpp).
extern "C" __global__ void grad_bias_cols(const float* __restrict__ dy, float* __restrict__ db, u32 n, u32 rows, int accumulate) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  float s = accumulate ? db[j] : 0.0f;
  for (u32 r = 0; r < rows; ++r) s = __fadd_rn(s, dy[static_cast<u64>(r) * n + j]);
  db[j] = s;
}

// Attention's probabilities, one block per row t of n: softmax of scale * s[t][0..t], zeros after.
extern "C" __global__ void grad_causal_softmax_rows(const float* __restrict__ s, float* __restrict__ p, u32 n, u32 rows, float scale) {
  const u32 row = blockIdx.x + blockIdx.y * gridDim.x;
  if (row >= rows) return;
  const u64 base = static_cast<u64>(row) * n;
  const u32 len = row + 1 < n ? row + 1 : n;
  float m = __int_as_float(0xff800000);
  for (u32 i = threadIdx.x; i < len; i += blockDim.x) m = fmaxf(m, s[base + i] * scale);
  m = block_reduce(m, true);
  float sum = 0.0f;
  for (u32 i = threadIdx.x; i < len; i += blockDim.x) sum += expf(s[base + i] * scale - m);
  const float inv = 1.0f / block_reduce(sum, false);
  for (u32 i = threadIdx.x; i < n; i += blockDim.x) p[base + i] = i < len ? expf(s[base + i] * scale - m) * inv : 0.0f;
}

// One AdamW step in place: m, v the moments, c1 = 1 - beta1^t, c2 = 1 - beta2^t (from the host).
extern "C" __global__ void grad_adamw(float* __restrict__ w, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v, u32 n,
                                      float lr, float beta1, float beta2, float eps, float wd, float c1, float c2) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float gi = g[i], mi = beta1 * m[i] + (1.0f - beta1) * gi, vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi, v[i] = vi;
    w[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * w[i]);
  }
}
