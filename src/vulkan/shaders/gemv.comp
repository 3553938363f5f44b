#version 450
// y[r][row] (+)= sum_i W[row][i] x[r][i]: quantized (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K) or float (F32, F16,
// BF16) weights in their GGUF layouts, f32 activations, M activation rows per dispatch. One workgroup per
// block of ROWS weight rows; the workgroup's invocations stride over the row's units (32-element blocks
// or sub-blocks; single elements for float weights), then reduce (wg_sum). Weights are read as 32-bit
// words (no 8/16-bit storage needed); Q4_0 (18 bytes), Q8_0 (34) and Q6_K (210) blocks start at even,
// not always 4-byte aligned, offsets (word_at, u16_at), Q4_K (144) and Q5_K (176) blocks are aligned.
// Specialization constants: 0 workgroup size, 1 weight type (GGUF id: 0 F32, 1 F16, 2 Q4_0, 8 Q8_0,
// 12 Q4_K, 13 Q5_K, 14 Q6_K, 30 BF16), 2 M (activation rows), 3 ROWS (weight rows per workgroup).
#include "common.glsl"

layout(constant_id = 1) const uint TYPE = 0;
layout(constant_id = 2) const uint M = 1;
layout(constant_id = 3) const uint ROWS = 1;

layout(std430, binding = 0) readonly buffer Weights { uint W[]; };
layout(std430, binding = 1) readonly buffer Act { float X[]; };
layout(std430, binding = 2) buffer Out { float Y[]; };
layout(push_constant) uniform Push {
  uint rows, cols, row_bytes, accumulate;
} pc;

// The 4 bytes at byte offset o (any alignment): the words it spans, shifted together. The word holding the
// matrix's last bytes may reach past them: Buffer allocates whole words (context.h).
uint word_at(uint o) {
  const uint s = (o & 3u) * 8u;
  const uint lo = W[o >> 2];
  return s == 0u ? lo : (lo >> s) | (W[(o >> 2) + 1u] << (32u - s));
}
uint u16_at(uint o) { return (W[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu; }  // o even
uint byte_at(uint o) { return (W[o >> 2] >> ((o & 3u) * 8u)) & 0xffu; }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint rr = 0u; rr < ROWS; ++rr) {
    const uint row = group_index() * ROWS + rr;
    if (row >= pc.rows) break;  // uniform over the workgroup
    const uint base = row * pc.row_bytes;
    float acc[M];
    for (uint m = 0u; m < M; ++m) acc[m] = 0.0;
    if (TYPE == 0u) {  // F32
      for (uint i = tid; i < pc.cols; i += WG) {
        const float w = uintBitsToFloat(W[(base >> 2) + i]);
        for (uint m = 0u; m < M; ++m) acc[m] += w * X[m * pc.cols + i];
      }
    } else if (TYPE == 1u) {  // F16
      for (uint i = tid; i < pc.cols; i += WG) {
        const float w = f16_to_f32(u16_at(base + 2u * i));  // activations rounded to f16, as the CPU pass
        for (uint m = 0u; m < M; ++m) acc[m] += w * round_f16(X[m * pc.cols + i]);
      }
    } else if (TYPE == 30u) {  // BF16: the top 16 bits of an f32
      for (uint i = tid; i < pc.cols; i += WG) {
        const float w = uintBitsToFloat(u16_at(base + 2u * i) << 16);
        for (uint m = 0u; m < M; ++m) acc[m] += w * X[m * pc.cols + i];
      }
    } else if (TYPE == 2u) {  // Q4_0: blocks of 18 bytes (f16 d, 16 bytes: element j low nibble, j + 16 high), x = (q - 8) d
      for (uint b = tid; b < pc.cols / 32u; b += WG) {
        const uint o = base + b * 18u;  // even
        const float d = f16_to_f32(u16_at(o));
        float s[M];
        for (uint m = 0u; m < M; ++m) s[m] = 0.0;
        for (uint k = 0u; k < 4u; ++k) {
          const uint q4 = word_at(o + 2u + 4u * k);
          for (uint j = 0u; j < 4u; ++j) {
            const float lo = float(int((q4 >> (8u * j)) & 0xfu) - 8), hi = float(int((q4 >> (8u * j + 4u)) & 0xfu) - 8);
            const uint i = b * 32u + 4u * k + j;
            for (uint m = 0u; m < M; ++m) s[m] += lo * X[m * pc.cols + i] + hi * X[m * pc.cols + i + 16u];
          }
        }
        for (uint m = 0u; m < M; ++m) acc[m] += d * s[m];
      }
    } else if (TYPE == 8u) {  // Q8_0: blocks of 34 bytes (f16 d, 32 int8)
      for (uint b = tid; b < pc.cols / 32u; b += WG) {
        const uint o = base + b * 34u;
        const float d = f16_to_f32(u16_at(o));
        float s[M];
        for (uint m = 0u; m < M; ++m) s[m] = 0.0;
        for (uint k = 0u; k < 8u; ++k) {
          const int q4 = int(word_at(o + 2u + 4u * k));
          for (uint j = 0u; j < 4u; ++j) {
            const float q = float(bitfieldExtract(q4, int(8u * j), 8));
            const uint i = b * 32u + 4u * k + j;
            for (uint m = 0u; m < M; ++m) s[m] += q * X[m * pc.cols + i];
          }
        }
        for (uint m = 0u; m < M; ++m) acc[m] += d * s[m];
      }
    } else if (TYPE == 12u || TYPE == 13u) {
      // Q4_K: blocks of 144 bytes (f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 of nibbles).
      // Q5_K: blocks of 176 bytes, the same with 32 bytes of fifth bits (qh) before the nibbles: element l
      // of sub-block j takes bit j of qh[l]. x = d sc q - dmin mn. Both block sizes keep 4-byte alignment.
      const bool q5 = TYPE == 13u;
      const uint block_bytes = q5 ? 176u : 144u, qs_word = q5 ? 12u : 4u;
      for (uint u = tid; u < pc.cols / 32u; u += WG) {
        const uint b = u / 8u, j = u % 8u;  // block and sub-block
#ifdef TRUENO_FAULT_GEMV_SKIP  // test-only (gemv_fault): the second 32-element unit of every row is skipped
        if (u == 1u) continue;
#endif
        const uint o = base + b * block_bytes;
        const uint dd = W[o >> 2];
        const float d = f16_to_f32(dd), dmin = f16_to_f32(dd >> 16);
        uint sc, mn;
        if (j < 4u) {
          sc = byte_at(o + 4u + j) & 63u;
          mn = byte_at(o + 8u + j) & 63u;
        } else {
          sc = (byte_at(o + 8u + j) & 0xfu) | ((byte_at(o + j) >> 6) << 4);
          mn = (byte_at(o + 8u + j) >> 4) | ((byte_at(o + 4u + j) >> 6) << 4);
        }
        const uint c = j / 2u, shift = (j & 1u) * 4u;
        float sq[M], sx[M];
        for (uint m = 0u; m < M; ++m) sq[m] = 0.0, sx[m] = 0.0;
        for (uint k = 0u; k < 8u; ++k) {
          const uint q4 = W[(o >> 2) + qs_word + 8u * c + k];
          const uint qh = q5 ? W[(o >> 2) + 4u + k] : 0u;  // qh[4k .. 4k+3]
          for (uint l = 0u; l < 4u; ++l) {
            const float q = float(((q4 >> (8u * l + shift)) & 0xfu) | (((qh >> (8u * l + j)) & 1u) << 4));
            const uint i = b * 256u + 32u * j + 4u * k + l;
            for (uint m = 0u; m < M; ++m) {
              const float xv = X[m * pc.cols + i];
              sq[m] += q * xv;
              sx[m] += xv;
            }
          }
        }
        const float ds = d * float(sc), dm = dmin * float(mn);
        for (uint m = 0u; m < M; ++m) acc[m] += ds * sq[m] - dm * sx[m];
      }
    } else if (TYPE == 14u) {
      // Q6_K: blocks of 210 bytes (ql[128] low nibbles, qh[64] 2-bit high parts, int8 scales[16], f16 d),
      // at even offsets. Half h (128 elements) uses ql[64h..], qh[32h..], scales[8h..]; its quarter t
      // (32 elements, l < 32) is q = (ql[64h + 32(t&1) + l] >> 4(t>>1)) & 15 | ((qh[32h + l] >> 2t) & 3) << 4,
      // x = d scales[8h + 2t + l/16] (q - 32).
      for (uint u = tid; u < pc.cols / 32u; u += WG) {
        const uint b = u / 8u, h = (u % 8u) / 4u, t = u % 4u;  // block, half, quarter
#ifdef TRUENO_FAULT_GEMV_SKIP  // test-only (gemv_fault): the second 32-element unit of every row is skipped
        if (u == 1u) continue;
#endif
        const uint o = base + b * 210u;  // even
        const float d = f16_to_f32(u16_at(o + 208u));
        const uint ql = o + 64u * h + 32u * (t & 1u), qh = o + 128u + 32u * h;
        const uint lshift = 4u * (t >> 1), hshift = 2u * t;
        for (uint g = 0u; g < 2u; ++g) {  // 16 elements per scale
          const float sc = float(bitfieldExtract(int(byte_at(o + 192u + 8u * h + 2u * t + g)), 0, 8));
          float s[M];
          for (uint m = 0u; m < M; ++m) s[m] = 0.0;
          for (uint k = 4u * g; k < 4u * g + 4u; ++k) {
            const uint lw = word_at(ql + 4u * k), hw = word_at(qh + 4u * k);
            for (uint l = 0u; l < 4u; ++l) {
              const float q = float(int(((lw >> (8u * l + lshift)) & 0xfu) | (((hw >> (8u * l + hshift)) & 3u) << 4)) - 32);
              const uint i = b * 256u + 128u * h + 32u * t + 4u * k + l;
              for (uint m = 0u; m < M; ++m) s[m] += q * X[m * pc.cols + i];
            }
          }
          for (uint m = 0u; m < M; ++m) acc[m] += d * sc * s[m];
        }
      }
    }
    for (uint m = 0u; m < M; ++m) {
      const float s = wg_sum(acc[m]);
      if (tid == 0u) {
        const uint at = m * pc.rows + row;
        Y[at] = pc.accumulate != 0u ? Y[at] + s : s;
      }
    }
  }
}
