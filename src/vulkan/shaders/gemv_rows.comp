#version 450
// y[r][row] (+)= sum_i W[row][i] x[r][i], one subgroup per weight row (Note [Vulkan GEMV per subgroup],
// ops.cpp): the row's units (a k-quant block's eighths, a Q8_0 block, 8 f16 values) go to the lanes in
// order, so each load instruction of a subgroup reads consecutive bytes of the row; the lanes' sums meet
// in one subgroupAdd, with no shared memory and no barrier. A workgroup takes ROWS rows, its subgroups
// striding over them (any subgroup size works). Types: Q4_K, Q6_K, Q8_0, F16 (activations rounded to
// f16, as the CPU pass); the others use gemv.comp. Specialization constants as gemv.comp.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

layout(constant_id = 1) const uint TYPE = 12;
layout(constant_id = 2) const uint M = 1;
layout(constant_id = 3) const uint ROWS = 4;  // rows per workgroup (a multiple of Q4K_ROWS for Q4_K)
const uint Q4K_ROWS = 2u;  // Q4_K rows per subgroup pass (they share the activation loads)
const uint STEPS = 4u;     // Q4_K blocks loaded ahead per lane

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
// Scale and min of Q4_K sub-block j from the packed scales s0 = bytes 0-3, s1 = 4-7, s2 = 8-11.
void scale_min_k4(uint j, uint s0, uint s1, uint s2, out uint sc, out uint mn) {
  const uint k = 8u * (j & 3u);
  if (j < 4u) {
    sc = (s0 >> k) & 63u, mn = (s1 >> k) & 63u;
  } else {
    sc = ((s2 >> k) & 0xfu) | (((s0 >> k) >> 6 & 3u) << 4);
    mn = ((s2 >> k) >> 4 & 0xfu) | (((s1 >> k) >> 6 & 3u) << 4);
  }
}
float sum4(vec4 v) { return (v.x + v.y) + (v.z + v.w); }
// The 4 bytes of w as floats, without int-to-float conversions (a quarter-rate instruction on NVIDIA, and
// the GEMV's bottleneck): a byte v OR-ed into the mantissa of 2^23 is the float 2^23 + v, exactly.
vec4 bytes4(uint w) {
  const uvec4 v = (uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu;
  return uintBitsToFloat(v | 0x4b000000u) - 8388608.0;
}

void main() {
  const uint lane = gl_SubgroupInvocationID, SG = gl_SubgroupSize;
  const uint per = TYPE == 12u ? Q4K_ROWS : 1u;  // rows per subgroup pass
  for (uint rr = gl_SubgroupID * per; rr < ROWS; rr += gl_NumSubgroups * per) {
    const uint row = group_index() * ROWS + rr;
    if (row >= pc.rows) break;  // uniform over the subgroup
    const uint base = row * pc.row_bytes;
    float acc[M];
    for (uint m = 0u; m < M; ++m) acc[m] = 0.0;
    if (TYPE == 12u) {
      // Q4_K (144-byte blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles in
      // 4 chunks of 32: chunk c holds sub-blocks 2c (low nibbles) and 2c+1 (high)). 8 lanes share a block:
      // each loads the block's first 16 bytes (one broadcast) and qs bytes [16t, 16t + 16), STEPS blocks
      // ahead before using any (enough bytes in flight to cover the memory latency), for Q4K_ROWS rows.
      const uint t = lane & 7u, c = t >> 1, step = max(SG / 8u, 1u), nb = pc.cols / 256u;
      uint bases[Q4K_ROWS];
      for (uint r = 0u; r < Q4K_ROWS; ++r) bases[r] = (min(row + r, pc.rows - 1u) * pc.row_bytes) >> 4;
      float acc2[Q4K_ROWS * M];
      for (uint k = 0u; k < Q4K_ROWS * M; ++k) acc2[k] = 0.0;
      for (uint b0 = lane >> 3; b0 < nb; b0 += step * STEPS) {
        uvec4 head[STEPS][Q4K_ROWS], q[STEPS][Q4K_ROWS];
        [[unroll]] for (uint st = 0u; st < STEPS; ++st) {
          const uint b = b0 + step * st;
          [[unroll]] for (uint r = 0u; r < Q4K_ROWS; ++r)
            if (b < nb) head[st][r] = W4[bases[r] + 9u * b], q[st][r] = W4[bases[r] + 9u * b + 1u + t];
        }
        [[unroll]] for (uint st = 0u; st < STEPS; ++st) {
          const uint b = b0 + step * st;
          if (b >= nb) break;
#ifdef TRUENO_FAULT_GEMV_SKIP  // test-only (gemv_rows_fault): one lane's part of every row's first block skipped
          if (b == 0u && t == 1u) continue;
#endif
          const uint e0 = b * 256u + 64u * c + 16u * (t & 1u);  // the low sub-block's first element here
          for (uint m = 0u; m < M; ++m) {
            const uint x0 = (m * pc.cols + e0) >> 2;
            vec4 xl[4], xh[4];
            [[unroll]] for (uint k = 0u; k < 4u; ++k) xl[k] = X4[x0 + k], xh[k] = X4[x0 + 8u + k];
            const float sxl = sum4((xl[0] + xl[1]) + (xl[2] + xl[3])), sxh = sum4((xh[0] + xh[1]) + (xh[2] + xh[3]));
            [[unroll]] for (uint r = 0u; r < Q4K_ROWS; ++r) {
              const uvec4 h = head[st][r], w = q[st][r];
              uint sc0, mn0, sc1, mn1;
              scale_min_k4(2u * c, h.y, h.z, h.w, sc0, mn0);
              scale_min_k4(2u * c + 1u, h.y, h.z, h.w, sc1, mn1);
              vec4 lo = vec4(0.0), hi = vec4(0.0);
              [[unroll]] for (uint k = 0u; k < 4u; ++k) {
                lo += bytes4(w[k] & 0x0f0f0f0fu) * xl[k];
                hi += bytes4((w[k] >> 4) & 0x0f0f0f0fu) * xh[k];
              }
              const vec2 dm = unpackHalf2x16(h.x);
              acc2[r * M + m] += dm.x * (float(sc0) * sum4(lo) + float(sc1) * sum4(hi)) - dm.y * (float(mn0) * sxl + float(mn1) * sxh);
            }
          }
        }
      }
      for (uint r = 0u; r < Q4K_ROWS; ++r) {
        for (uint m = 0u; m < M; ++m) {
          const float v = subgroupAdd(acc2[r * M + m]);
          if (subgroupElect() && row + r < pc.rows) Y[m * pc.rows + row + r] = pc.accumulate != 0u ? Y[m * pc.rows + row + r] + v : v;
        }
      }
      continue;  // written
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
