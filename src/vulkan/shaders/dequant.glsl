// Eight consecutive weights of a GGUF row, as floats: dequant8(row's byte offset, element k (a multiple
// of 8), out v) for the weight type TYPE (a specialization constant of the including shader, GGUF ids as
// gemv.comp). Weights are the including shader's uint array W.
#ifndef TRUENO_DEQUANT_GLSL
#define TRUENO_DEQUANT_GLSL

uint dq_word_at(uint o) {  // the 4 bytes at byte offset o (even)
  const uint lo = W[o >> 2];
  return (o & 3u) == 0u ? lo : (lo >> 16) | (W[(o >> 2) + 1u] << 16);
}
uint dq_u16_at(uint o) { return (W[o >> 2] >> ((o & 2u) * 8u)) & 0xffffu; }
uint dq_byte_at(uint o) { return (W[o >> 2] >> ((o & 3u) * 8u)) & 0xffu; }

// Scale and min of Q4_K/Q5_K sub-block j from the 12 packed bytes at byte offset o.
void dq_scale_min(uint o, uint j, out float sc, out float mn) {
  if (j < 4u) {
    sc = float(dq_byte_at(o + j) & 63u), mn = float(dq_byte_at(o + 4u + j) & 63u);
  } else {
    sc = float((dq_byte_at(o + 4u + j) & 0xfu) | ((dq_byte_at(o + j - 4u) >> 6) << 4));
    mn = float((dq_byte_at(o + 4u + j) >> 4) | ((dq_byte_at(o + j) >> 6) << 4));
  }
}

void dequant8(uint base, uint k, out float v[8]) {
  if (TYPE == 0u) {  // F32
    for (uint i = 0u; i < 8u; ++i) v[i] = uintBitsToFloat(W[(base >> 2) + k + i]);
  } else if (TYPE == 1u) {  // F16
    for (uint i = 0u; i < 4u; ++i) {
      const vec2 h = unpackHalf2x16(W[((base + 2u * k) >> 2) + i]);
      v[2u * i] = h.x, v[2u * i + 1u] = h.y;
    }
  } else if (TYPE == 30u) {  // BF16
    for (uint i = 0u; i < 4u; ++i) {
      const uint w = W[((base + 2u * k) >> 2) + i];
      v[2u * i] = uintBitsToFloat(w << 16), v[2u * i + 1u] = uintBitsToFloat(w & 0xffff0000u);
    }
  } else if (TYPE == 8u) {  // Q8_0: 34-byte blocks, f16 d then 32 int8
    const uint o = base + (k / 32u) * 34u, j = k % 32u;
    const float d = unpackHalf2x16(dq_u16_at(o)).x;
    for (uint h = 0u; h < 2u; ++h) {
      const int w = int(dq_word_at(o + 2u + j + 4u * h));
      for (uint i = 0u; i < 4u; ++i) v[4u * h + i] = d * float(bitfieldExtract(w, int(8u * i), 8));
    }
  } else if (TYPE == 2u) {  // Q4_0: 18-byte blocks, f16 d, element j < 16 low nibble of qs[j], else high of qs[j - 16]
    const uint o = base + (k / 32u) * 18u, j = k % 32u;
    const float d = unpackHalf2x16(dq_u16_at(o)).x;
    const uint sh = j >= 16u ? 4u : 0u;
    for (uint h = 0u; h < 2u; ++h) {
      const uint w = dq_word_at(o + 2u + (j % 16u) + 4u * h);
      for (uint i = 0u; i < 4u; ++i) v[4u * h + i] = d * (float((w >> (8u * i + sh)) & 0xfu) - 8.0);
    }
  } else if (TYPE == 12u || TYPE == 13u) {  // Q4_K (144 bytes) / Q5_K (176: qh[32] before the nibbles)
    const bool q5 = TYPE == 13u;
    const uint o = base + (k / 256u) * (q5 ? 176u : 144u), e = k % 256u, c = e / 64u, j = e / 32u, i0 = e % 32u;
    const vec2 dm = unpackHalf2x16(W[o >> 2]);
    float sc, mn;
    dq_scale_min(o + 4u, j, sc, mn);
    const float a = dm.x * sc, b = dm.y * mn;
    const uint qs = o + (q5 ? 48u : 16u) + 32u * c + i0, sh = 4u * (j & 1u);
    for (uint h = 0u; h < 2u; ++h) {
      const uint w = W[(qs >> 2) + h];
      const uint hb = q5 ? W[((o + 16u + i0) >> 2) + h] : 0u;
      for (uint i = 0u; i < 4u; ++i) {
        uint q = (w >> (8u * i + sh)) & 0xfu;
        if (q5) q |= ((hb >> (8u * i + j)) & 1u) << 4;
        v[4u * h + i] = a * float(q) - b;
      }
    }
  } else if (TYPE == 14u) {  // Q6_K (210 bytes at even offsets: ql[128], qh[64], int8 scales[16], f16 d)
    const uint o = base + (k / 256u) * 210u, e = k % 256u, hf = e / 128u, t = (e % 128u) / 32u, l0 = e % 32u;
    const float d = unpackHalf2x16(dq_u16_at(o + 208u)).x;
    const float s = d * float(int(dq_byte_at(o + 192u + 8u * hf + 2u * t + l0 / 16u) << 24) >> 24);
    const uint ql = o + 64u * hf + 32u * (t & 1u) + l0, qh = o + 128u + 32u * hf + l0, sh = 4u * (t >> 1);
    for (uint h = 0u; h < 2u; ++h) {
      const uint wl = dq_word_at(ql + 4u * h), wh = dq_word_at(qh + 4u * h);
      for (uint i = 0u; i < 4u; ++i) {
        const uint q = ((wl >> (8u * i + sh)) & 0xfu) | (((wh >> (8u * i + 2u * t)) & 3u) << 4);
        v[4u * h + i] = s * (float(q) - 32.0);
      }
    }
  }
}

#endif
