#version 450
// out[i] = f(a[i], b[i]) or f(a[i]) for the public element-wise device ops (trueno::ops on DeviceTensor;
// src/vulkan/tensor_ops.cpp). The op is specialization constant 1 (codes below, tensor_ops.cpp's table);
// the formulas are the CPU reference's (src/cpu/kernels/elementwise/elementwise_ref.cpp), written out with
// exp only: GLSL's tanh may return NaN for large |x| on some drivers, and GLSL has no erf.
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0u;
layout(std430, binding = 0) readonly buffer A { float Av[]; };
layout(std430, binding = 1) readonly buffer B { float Bv[]; };
layout(std430, binding = 2) writeonly buffer O { float Ov[]; };
layout(push_constant) uniform Push { uint n; float alpha; } pc;

float sigmoid_(float x) { return 1.0 / (1.0 + exp(-x)); }
float tanh_(float x) {
  const float a = abs(x);
  // Near 0, 1 - e cancels to a few bits (one value at |x| ~ 0.01 was 4e-6 off); there the odd Taylor
  // series to x^11 (truncation < 3e-10 relative at |x| = 0.25, below float's rounding).
  if (a < 0.25) {
    const float z = x * x;
    return x * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (62.0 / 2835.0 + z * (-1382.0 / 155925.0))))));
  }
  const float e = exp(-2.0 * a);  // in (0, 1): no overflow
  return sign(x) * (1.0 - e) / (1.0 + e);
}
// erfc by Numerical Recipes' Chebyshev fit (erfcc): relative error < 1.2e-7 everywhere; computed
// directly (not 1 - erf) so that gelu_erf of a large negative x keeps its tiny value, as the CPU's does.
float erfc_(float x) {
  const float z = abs(x);
  const float t = 1.0 / (1.0 + 0.5 * z);
  const float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
                  t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
                  t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? r : 2.0 - r;
}

void main() {
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  if (i >= pc.n) return;
  const float a = Av[i];
  precise float y;
  switch (OP) {
    case 0u: y = a + Bv[i]; break;                  // add
    case 1u: y = a - Bv[i]; break;                  // sub
    case 2u: y = a * Bv[i]; break;                  // mul
    case 3u: y = a / Bv[i]; break;                  // div
    case 4u: y = a * sigmoid_(a) * Bv[i]; break;    // swiglu
    case 5u: y = a * pc.alpha; break;               // scale
    case 6u: y = abs(a); break;                     // abs
    case 7u: y = a > 0.0 ? a : 0.0; break;          // relu
    case 8u: y = exp(a); break;                     // exp
    case 9u: y = sigmoid_(a); break;                // sigmoid
    case 10u: y = tanh_(a); break;                  // tanh
    // gelu_tanh as x * sigmoid(2u) and gelu_erf through erfc, as the CPU: no cancellation for x << 0
    case 11u: y = a / (1.0 + exp(-((a * a * a) * 0.044715 + a) * 1.5957691216057308)); break;
    case 12u: y = (a * 0.5) * erfc_(a * -0.70710678118654752); break;
    case 13u: y = a * sigmoid_(a); break;           // silu
    // backward (trueno::grad, src/grad/grad.cpp): b is dy; a is x (silu, gelu_tanh) or the output y
    case 14u: { const float s = sigmoid_(a); y = Bv[i] * (s * (1.0 + a * (1.0 - s))); break; }
    case 15u: {  // Note [Saturated tanh] (src/grad/grad.cpp): 1 + t and 1 - t^2 from e = exp(-2|u|)
      const float u = 0.7978845608028654 * (a + 0.044715 * a * a * a), e = exp(-2.0 * abs(u)), one_e = 1.0 + e;
      const float one_plus_t = (u >= 0.0 ? 2.0 : 2.0 * e) / one_e, sech2 = 4.0 * e / (one_e * one_e);
      y = Bv[i] * (0.5 * one_plus_t + 0.5 * a * sech2 * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * a * a));
      break;
    }
    case 16u: y = Bv[i] * ((1.0 - a) * (1.0 + a)); break;  // tanh, from y (Note [Saturated tanh])
    default: y = Bv[i] * (a * (1.0 - a)); break;    // 17: sigmoid, from y
  }
  Ov[i] = y;
}
