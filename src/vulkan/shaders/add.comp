#version 450
// y[i] += x[i % period]: one IEEE f32 addition per element (trueno::ops::add; period < n adds a bias to
// every row of y).
#include "common.glsl"

layout(std430, binding = 0) buffer Y { float Yv[]; };
layout(std430, binding = 1) readonly buffer X { float Xv[]; };
layout(push_constant) uniform Push { uint n, period; } pc;

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  precise float s = Yv[i] + Xv[i % pc.period];
  Yv[i] = s;
}
