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
float sum4(vec4 v) { return (v.x + v.y) + (v.z + v.w); }
// The 4 bytes of w as floats, without int-to-float conversions (a quarter-rate instruction on NVIDIA, and
// the GEMV's bottleneck): a byte v OR-ed into the mantissa of 2^23 is the float 2^23 + v, exactly.
vec4 bytes4(uint w) {
  const uvec4 v = (uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu;
  return uintBitsToFloat(v | 0x4b000000u) - 8388608.0;
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
      // in 4 chunks of 32: chunk c holds sub-blocks 2c (low nibbles) and 2c+1 (high)). A part is a chunk.
      for (uint u = lane; u < (pc.cols / 256u) * 4u; u += SG) {
        const uint b = u / 4u, c = u % 4u;
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
        const uint q0 = (o + 16u + 32u * c) >> 4;
        const uvec4 qa = W4[q0], qb = W4[q0 + 1u];
        const uint e0 = b * 256u + 64u * c;  // the low sub-block's first element
        for (uint m = 0u; m < M; ++m) {
          const uint x0 = (m * pc.cols + e0) >> 2;
          vec4 slo = vec4(0.0), shi = vec4(0.0), xlo = vec4(0.0), xhi = vec4(0.0);
          for (uint k = 0u; k < 8u; ++k) {
            const uint w = k < 4u ? qa[k] : qb[k - 4u];
            const vec4 a = X4[x0 + k], h = X4[x0 + 8u + k];  // + 32 elements: the high sub-block
            slo += bytes4(w & 0x0f0f0f0fu) * a, shi += bytes4((w >> 4) & 0x0f0f0f0fu) * h;
            xlo += a, xhi += h;
          }
          acc[m] += d * (float(sc0) * sum4(slo) + float(sc1) * sum4(shi)) - dmin * (float(mn0) * sum4(xlo) + float(mn1) * sum4(xhi));
        }
      }
    } else if (TYPE == 14u) {
      // Q6_K (210-byte blocks at even offsets: ql[128], qh[64], int8 scales[16], f16 d). Half h of 128
      // elements uses ql[64h..], qh[32h..], scales[8h..]; element l (< 32) of its quarter t is
      // (ql[64h + 32(t&1) + l] >> 4(t>>1)) & 15 | ((qh[32h + l] >> 2t) & 3) << 4, minus 32, times
      // d scales[8h + 2t + l/16]. Part p of a block: half p/4, l = 8(p%4)..+7, all four quarters; the
      // 6-bit values of 4 elements are assembled in one word (a byte each) before conversion.
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
            const uint w0 = ((lo0 >> sh) & 0x0f0f0f0fu) | (((h0 >> (2u * t)) & 0x03030303u) << 4);
            const uint w1 = ((lo1 >> sh) & 0x0f0f0f0fu) | (((h1 >> (2u * t)) & 0x03030303u) << 4);
            const uint x0 = (m * pc.cols + e0 + 32u * t) >> 2;
            const vec4 a = X4[x0], c = X4[x0 + 1u];
            r += s[t] * (sum4(bytes4(w0) * a + bytes4(w1) * c) - 32.0 * sum4(a + c));
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
            const vec4 a = X4[x0 + k];  // int8 q = (q + 128) - 128: the bytes with their top bit flipped
            r += sum4(bytes4(word_at(o + 2u + 4u * k) ^ 0x80808080u) * a) - 128.0 * sum4(a);
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
