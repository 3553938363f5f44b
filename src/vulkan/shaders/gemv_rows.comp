#version 450
// y[r][row] (+)= sum_i W[row][i] x[r][i], one subgroup per weight row (Note [Vulkan GEMV per subgroup],
// ops.cpp): the row's units (a k-quant block's eighths, a Q8_0 block, 8 f16 values) go to the lanes in
// order, so each load instruction of a subgroup reads consecutive bytes of the row; the lanes' sums meet
// in one subgroupAdd, with no shared memory and no barrier. A workgroup takes ROWS rows, its subgroups
// striding over them (any subgroup size works). Types: Q4_K, Q6_K, Q8_0, F16 (activations rounded to
// f16, as the CPU pass); the others use gemv.comp. Specialization constants as gemv.comp.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(constant_id = 1) const uint TYPE = 12;
layout(constant_id = 2) const uint M = 1;
layout(constant_id = 3) const uint ROWS = 4;

layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 0) readonly buffer Weights4 { uvec4 W4[]; };  // the same memory, 16 bytes at a time
layout(std430, binding = 1) readonly buffer Act { float X[]; };
layout(std430, binding = 1) readonly buffer Act4 { vec4 X4[]; };
layout(std430, binding = 2) buffer Out { float Y[]; };
layout(push_constant) uniform Push {
  uint rows, cols, row_bytes, accumulate;
} pc;

uint word_at(uint o) {  // the 4 bytes at byte offset o (even)
  const uint lo = W[o >> 2];
  return (o & 3u) == 0u ? lo : (lo >> 16) | (W[(o >> 2) + 1u] << 16);
}
uint u16_at(uint o) { return (W[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu; }
uint byte_at(uint o) { return (W[o >> 2] >> ((o & 3u) * 8u)) & 0xffu; }
float dot4(vec4 a, vec4 b) { return dot(a, b); }
vec4 nibbles(uint w, uint shift) {  // bytes of w, each >> shift & 15
  return vec4((w >> shift) & 0xfu, (w >> (shift + 8u)) & 0xfu, (w >> (shift + 16u)) & 0xfu, (w >> (shift + 24u)) & 0xfu);
}

void main() {
  const uint lane = gl_SubgroupInvocationID, SG = gl_SubgroupSize;
  for (uint rr = gl_SubgroupID; rr < ROWS; rr += gl_NumSubgroups) {
    const uint row = group_index() * ROWS + rr;
    if (row >= pc.rows) break;  // uniform over the subgroup
    const uint base = row * pc.row_bytes;
    float acc[M];
    for (uint m = 0u; m < M; ++m) acc[m] = 0.0;
    if (TYPE == 12u) {
      // Q4_K (144-byte blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
      // in 4 chunks of 32: chunk c holds sub-blocks 2c (low nibbles) and 2c+1 (high)). Part p of a block
      // is 16 bytes: chunk p/2, elements 16(p&1)..+15 of its two sub-blocks.
      for (uint u = lane; u < (pc.cols / 256u) * 8u; u += SG) {
        const uint b = u / 8u, p = u % 8u, c = p / 2u, i0 = 16u * (p & 1u);
#ifdef TRUENO_FAULT_GEMV_SKIP  // test-only (gemv_rows_fault): the second part of every row is skipped
        if (u == 1u) continue;
#endif
        const uint o = base + b * 144u;
        const uint dd = W[o >> 2];
        const float d = f16_to_f32(dd), dmin = f16_to_f32(dd >> 16);
        const uint j = 2u * c;  // the low sub-block; j + 1 the high one
        uint sc0, mn0, sc1, mn1;
        if (j < 4u) {
          sc0 = byte_at(o + 4u + j) & 63u, mn0 = byte_at(o + 8u + j) & 63u;
          sc1 = byte_at(o + 5u + j) & 63u, mn1 = byte_at(o + 9u + j) & 63u;
        } else {
          sc0 = (byte_at(o + 8u + j) & 0xfu) | ((byte_at(o + j) >> 6) << 4);
          mn0 = (byte_at(o + 8u + j) >> 4) | ((byte_at(o + 4u + j) >> 6) << 4);
          sc1 = (byte_at(o + 9u + j) & 0xfu) | ((byte_at(o + 1u + j) >> 6) << 4);
          mn1 = (byte_at(o + 9u + j) >> 4) | ((byte_at(o + 5u + j) >> 6) << 4);
        }
        const uvec4 q = W4[(o + 16u + 32u * c + i0) >> 4];
        const uint e0 = b * 256u + 64u * c + i0;  // element of the low sub-block's first value
        for (uint m = 0u; m < M; ++m) {
          const uint x0 = (m * pc.cols + e0) >> 2;
          float slo = 0.0, shi = 0.0, xlo = 0.0, xhi = 0.0;
          for (uint k = 0u; k < 4u; ++k) {
            const vec4 a = X4[x0 + k], h = X4[x0 + 8u + k];  // + 32 elements: the high sub-block
            slo += dot4(nibbles(q[k], 0u), a), shi += dot4(nibbles(q[k], 4u), h);
            xlo += a.x + a.y + a.z + a.w, xhi += h.x + h.y + h.z + h.w;
          }
          acc[m] += d * (float(sc0) * slo + float(sc1) * shi) - dmin * (float(mn0) * xlo + float(mn1) * xhi);
        }
      }
    } else if (TYPE == 14u) {
      // Q6_K (210-byte blocks at even offsets: ql[128], qh[64], int8 scales[16], f16 d). Half h of 128
      // elements uses ql[64h..], qh[32h..], scales[8h..]; element l (< 32) of its quarter t is
      // (ql[64h + 32(t&1) + l] >> 4(t>>1)) & 15 | ((qh[32h + l] >> 2t) & 3) << 4, minus 32, times
      // d scales[8h + 2t + l/16]. Part p of a block: half p/4, l = 8(p%4)..+7, all four quarters.
      for (uint u = lane; u < (pc.cols / 256u) * 8u; u += SG) {
        const uint b = u / 8u, h = u % 8u / 4u, l0 = 8u * (u % 4u);
#ifdef TRUENO_FAULT_GEMV_SKIP
        if (u == 1u) continue;
#endif
        const uint o = base + b * 210u;
        const float d = f16_to_f32(u16_at(o + 208u));
        const uint ql = o + 64u * h + l0, qh = o + 128u + 32u * h + l0, sc = o + 192u + 8u * h + l0 / 16u;
        const uint qa0 = word_at(ql), qa1 = word_at(ql + 4u), qb0 = word_at(ql + 32u), qb1 = word_at(ql + 36u);
        const uint h0 = word_at(qh), h1 = word_at(qh + 4u);
        float s[4];
        for (uint t = 0u; t < 4u; ++t) s[t] = float(int(byte_at(sc + 2u * t) << 24) >> 24);
        const uint e0 = b * 256u + 128u * h + l0;
        for (uint m = 0u; m < M; ++m) {
          float r = 0.0;
          for (uint t = 0u; t < 4u; ++t) {
            const uint lo0 = (t & 1u) == 0u ? qa0 : qb0, lo1 = (t & 1u) == 0u ? qa1 : qb1, sh = 4u * (t >> 1);
            const vec4 q0 = nibbles(lo0, sh) + 16.0 * vec4((h0 >> (2u * t)) & 3u, (h0 >> (2u * t + 8u)) & 3u, (h0 >> (2u * t + 16u)) & 3u, (h0 >> (2u * t + 24u)) & 3u) - 32.0;
            const vec4 q1 = nibbles(lo1, sh) + 16.0 * vec4((h1 >> (2u * t)) & 3u, (h1 >> (2u * t + 8u)) & 3u, (h1 >> (2u * t + 16u)) & 3u, (h1 >> (2u * t + 24u)) & 3u) - 32.0;
            const uint x0 = (m * pc.cols + e0 + 32u * t) >> 2;
            r += s[t] * (dot4(q0, X4[x0]) + dot4(q1, X4[x0 + 1u]));
          }
          acc[m] += d * r;
        }
      }
    } else if (TYPE == 8u) {  // Q8_0 (34-byte blocks: f16 d, 32 int8): a block per part
      for (uint b = lane; b < pc.cols / 32u; b += SG) {
        const uint o = base + b * 34u;
        const float d = f16_to_f32(u16_at(o));
        for (uint m = 0u; m < M; ++m) {
          const uint x0 = (m * pc.cols + b * 32u) >> 2;
          float r = 0.0;
          for (uint k = 0u; k < 8u; ++k) {
            const int w = int(word_at(o + 2u + 4u * k));
            r += dot4(vec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8), bitfieldExtract(w, 16, 8), bitfieldExtract(w, 24, 8)), X4[x0 + k]);
          }
          acc[m] += d * r;
        }
      }
    } else {  // F16 (cols a multiple of 8): 8 values per part
      for (uint g = lane; g < pc.cols / 8u; g += SG) {
        const uvec4 w = W4[(base >> 4) + g];
        for (uint m = 0u; m < M; ++m) {
          const uint x0 = (m * pc.cols + 8u * g) >> 2;
          const vec4 a = X4[x0], c = X4[x0 + 1u];
          const vec4 ar = vec4(round_f16(a.x), round_f16(a.y), round_f16(a.z), round_f16(a.w));
          const vec4 cr = vec4(round_f16(c.x), round_f16(c.y), round_f16(c.z), round_f16(c.w));
          acc[m] += dot4(vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)), ar) + dot4(vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w)), cr);
        }
      }
    }
    for (uint m = 0u; m < M; ++m) {
      const float s = subgroupAdd(acc[m]);
      if (subgroupElect()) Y[m * pc.rows + row] = pc.accumulate != 0u ? Y[m * pc.rows + row] + s : s;
    }
  }
}
