#version 450
// Cross-entropy with logits on rows of n classes, one workgroup per row (trueno::grad::cross_entropy):
// ls = x - max - log(sum(exp(x - max))), dlogits = scale (exp(ls) - onehot(target)), loss[row] = -ls[target]
// (NaN for a target outside the classes).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Logits { float X[]; };
layout(std430, binding = 1) readonly buffer Targets { int T[]; };
layout(std430, binding = 2) writeonly buffer Dlogits { float DX[]; };
layout(std430, binding = 3) writeonly buffer Loss { float L[]; };
layout(push_constant) uniform Push { uint n, rows; float scale; } pc;

void main() {
  const uint row = group_index();
  if (row >= pc.rows) return;  // uniform over the workgroup
  const uint base = row * pc.n;
  float m = uintBitsToFloat(0xff800000u);
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) m = max(m, X[base + i]);
  m = wg_max(m);
  float s = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) s += exp(X[base + i] - m);
  const float l = log(wg_sum(s));
  const int t = T[row];
  for (uint i = gl_LocalInvocationID.x; i < pc.n; i += WG) {
    const float ls = (X[base + i] - m) - l;
    DX[base + i] = pc.scale * (exp(ls) - (int(i) == t ? 1.0 : 0.0));
    if (int(i) == t) L[row] = -ls;
  }
  if (gl_LocalInvocationID.x == 0u && (t < 0 || uint(t) >= pc.n)) L[row] = uintBitsToFloat(0x7fc00000u);
}
