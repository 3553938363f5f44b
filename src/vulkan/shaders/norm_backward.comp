#version 450
// RMSNorm's and LayerNorm's backward on rows of n (trueno::grad::rmsnorm / layernorm; the formulas and
// their order are src/grad/grad.cpp's), in three dispatches chosen by STAGE (specialization constant 1):
// 0 one workgroup per row, STATS[row] = (mean, 1 / sqrt(var + eps)), (0, 1 / rms) for rmsnorm;
// 1 one workgroup per row, dx; 2 one invocation per column, dw (+)= sum of dy xh, db (+)= sum of dy, the rows
// in order (Note [Deterministic parameter gradients], src/api/device_grad.cpp). LAYER (2): layernorm.
#include "common.glsl"

layout(constant_id = 1) const uint STAGE = 0u;
layout(constant_id = 2) const bool LAYER = false;

layout(std430, binding = 0) readonly buffer In { float X[]; };
layout(std430, binding = 1) readonly buffer Weight { float Wt[]; };
layout(std430, binding = 2) readonly buffer Grad { float DY[]; };
layout(std430, binding = 3) buffer Stats { float ST[]; };
layout(std430, binding = 4) buffer Dx { float DX[]; };
layout(std430, binding = 5) buffer Dw { float DW[]; };
layout(std430, binding = 6) buffer Db { float DB[]; };
layout(push_constant) uniform Push { uint n, rows; float eps; uint accumulate; } pc;

void stats() {
  const uint row = group_index(), base = row * pc.n;
  float mean = 0.0, s = 0.0;
  if (LAYER) {
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += X[base + i];
    mean = wg_sum(s) / float(pc.n);
    s = 0.0;
  }
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += (X[base + i] - mean) * (X[base + i] - mean);
  const float r = 1.0 / sqrt(wg_sum(s) / float(pc.n) + pc.eps);
  if (gl_LocalInvocationID.x == 0u) ST[2u * row] = mean, ST[2u * row + 1u] = r;
}

void dx() {
  const uint row = group_index(), base = row * pc.n;
  const float mean = ST[2u * row], r = ST[2u * row + 1u], fn = float(pc.n);
  float sg = 0.0, sgx = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) {
    const float g = DY[base + i] * Wt[i];
    sg += g;
    sgx += LAYER ? g * ((X[base + i] - mean) * r) : g * X[base + i];
  }
  sgx = wg_sum(sgx);
  if (LAYER) {
    const float mg = wg_sum(sg) / fn, mgx = sgx / fn;
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG)
      DX[base + i] = r * (DY[base + i] * Wt[i] - mg - ((X[base + i] - mean) * r) * mgx);
  } else {
    const float k = r * r * r * sgx / fn;
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) DX[base + i] = r * (DY[base + i] * Wt[i]) - k * X[base + i];
  }
}

void params() {
  const uint j = group_index() * WG + gl_LocalInvocationID.x;
  if (j >= pc.n) return;
  float aw = pc.accumulate != 0u ? DW[j] : 0.0, ab = pc.accumulate != 0u && LAYER ? DB[j] : 0.0;
  for (uint row = 0u; row < pc.rows; ++row) {
    const uint at = row * pc.n + j;
    const float mean = ST[2u * row], r = ST[2u * row + 1u];
    aw += LAYER ? DY[at] * ((X[at] - mean) * r) : DY[at] * X[at] * r;
    ab += DY[at];
  }
  DW[j] = aw;
  if (LAYER) DB[j] = ab;
}

void main() {
  if (STAGE == 2u) {
    params();
    return;
  }
  if (group_index() >= pc.rows) return;  // uniform over the workgroup
  if (STAGE == 0u) stats(); else dx();
}
