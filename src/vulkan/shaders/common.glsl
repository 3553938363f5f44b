// Shared by the shaders: the workgroup size (specialization constant 0), workgroup sums (subgroup
// arithmetic when compiled with USE_SUBGROUP, else a shared-memory tree; the workgroup size must be a
// power of two), f16 conversion with round-to-nearest-even, and a portable sin/cos.
#ifndef TRUENO_COMMON_GLSL
#define TRUENO_COMMON_GLSL

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
#define WG gl_WorkGroupSize.x

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

shared float red_[WG];

// The sum of v over the workgroup, returned to every invocation. Call in uniform control flow.
float wg_sum(float v) {
#ifdef USE_SUBGROUP
  v = subgroupAdd(v);
  if (subgroupElect()) red_[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0u; i < gl_NumSubgroups; ++i) s += red_[i];
  barrier();
  return s;
#else
  red_[gl_LocalInvocationID.x] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (gl_LocalInvocationID.x < s) red_[gl_LocalInvocationID.x] += red_[gl_LocalInvocationID.x + s];
    barrier();
  }
  const float r = red_[0];
  barrier();
  return r;
#endif
}

// The largest v over the workgroup, returned to every invocation. Call in uniform control flow.
float wg_max(float v) {
#ifdef USE_SUBGROUP
  v = subgroupMax(v);
  if (subgroupElect()) red_[gl_SubgroupID] = v;
  barrier();
  float s = red_[0];
  for (uint i = 1u; i < gl_NumSubgroups; ++i) s = max(s, red_[i]);
  barrier();
  return s;
#else
  red_[gl_LocalInvocationID.x] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (gl_LocalInvocationID.x < s) red_[gl_LocalInvocationID.x] = max(red_[gl_LocalInvocationID.x], red_[gl_LocalInvocationID.x + s]);
    barrier();
  }
  const float r = red_[0];
  barrier();
  return r;
#endif
}

// f32 -> f16 bits, round to nearest even (packHalf2x16 leaves the rounding to the implementation).
uint f32_to_f16(float f) {
  const uint x = floatBitsToUint(f);
  const uint sign = (x >> 16) & 0x8000u;
  const uint e = (x >> 23) & 0xffu;
  uint m = x & 0x7fffffu;
  if (e == 0xffu) return sign | 0x7c00u | (m != 0u ? 0x200u | (m >> 13) : 0u);
  const int ne = int(e) - 112;  // the f16 exponent field
  if (ne >= 31) return sign | 0x7c00u;
  if (ne <= 0) {  // f16 subnormal or zero
    if (ne < -10) return sign;
    m |= 0x800000u;
    const uint shift = uint(14 - ne);
    uint h = m >> shift;
    const uint rem = m & ((1u << shift) - 1u), half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (h & 1u) != 0u)) ++h;
    return sign | h;
  }
  uint h = sign | (uint(ne) << 10) | (m >> 13);
  const uint rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;  // a carry rounds into the exponent
  return h;
}

float f16_to_f32(uint bits) { return unpackHalf2x16(bits & 0xffffu).x; }
// x rounded to the nearest f16 (as the CPU pass rounds attention's q and weights).
float round_f16(float x) { return f16_to_f32(f32_to_f16(x)); }

// sin and cos of x with an explicit 3-part Cody-Waite reduction by pi/2 and the Cephes minimax
// polynomials: a couple of ulp for |x| up to ~1e5 on every device (GLSL's sin/cos guarantee far less).
void sincos_(float x, out float s, out float c) {
  precise float k = roundEven(x * 0.636619772367581343f);
  precise float r = x - k * 1.5703125f;
  r = r - k * 4.837512969970703125e-4f;
  r = r - k * 7.54978995489188216e-8f;
  const float z = r * r;
  const float ps = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
  const float pc = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
  const int q = int(k) & 3;
  if (q == 0) { s = ps; c = pc; }
  else if (q == 1) { s = pc; c = -ps; }
  else if (q == 2) { s = -ps; c = -pc; }
  else { s = -pc; c = ps; }
}

// The workgroup index over a 2D grid (dispatches of more than 65535 groups use y).
uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#endif
