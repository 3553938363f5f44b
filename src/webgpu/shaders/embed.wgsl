// out[out_offset + i] = W[row][i], i < cols: one row of a GGUF matrix (the token embedding table)
// dequantized to f32, one invocation per element. The glue binds the piece of W that holds the row (Note
// [WebGPU weights in pieces]) and passes the row's byte offset in it (byte_skew), so the token id is a
// host value: one dispatch per token. Override TYPE: the GGUF type id, as gemv.wgsl.

override TYPE: u32 = 0u;

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read_write> OUT: array<f32>;
struct Params { cols: u32, byte_skew: u32, out_offset: u32 }
@group(0) @binding(2) var<uniform> p: Params;

fn u16_at(o: u32) -> u32 { return (W[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu; }  // o even
fn byte_at(o: u32) -> u32 { return (W[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu; }
fn sbyte_at(o: u32) -> f32 { return f32(extractBits(i32(byte_at(o)), 0u, 8u)); }

// Element i of the row at byte offset base.
fn dequant(base: u32, i: u32) -> f32 {
  if (TYPE == 0u) { return bitcast<f32>(W[(base >> 2u) + i]); }
  if (TYPE == 1u) { return f16_to_f32(u16_at(base + 2u * i)); }
  if (TYPE == 30u) { return bitcast<f32>(u16_at(base + 2u * i) << 16u); }
  if (TYPE == 2u) {  // Q4_0: element j < 16 the low nibble of qs[j], else the high nibble of qs[j - 16]
    let o = base + (i / 32u) * 18u;
    let j = i % 32u;
    let q = (byte_at(o + 2u + j % 16u) >> select(0u, 4u, j >= 16u)) & 0xfu;
    return f16_to_f32(u16_at(o)) * f32(i32(q) - 8);
  }
  if (TYPE == 8u) {  // Q8_0
    let o = base + (i / 32u) * 34u;
    return f16_to_f32(u16_at(o)) * sbyte_at(o + 2u + i % 32u);
  }
  if (TYPE == 12u || TYPE == 13u) {  // Q4_K / Q5_K (gemv.wgsl has the layout)
    let q5 = TYPE == 13u;
    let o = base + (i / 256u) * select(144u, 176u, q5);
    let e = i % 256u;
    let j = e / 32u;
    let l = e % 32u;
    var sc: u32;
    var mn: u32;
    if (j < 4u) {
      sc = byte_at(o + 4u + j) & 63u;
      mn = byte_at(o + 8u + j) & 63u;
    } else {
      sc = (byte_at(o + 8u + j) & 0xfu) | ((byte_at(o + j) >> 6u) << 4u);
      mn = (byte_at(o + 8u + j) >> 4u) | ((byte_at(o + 4u + j) >> 6u) << 4u);
    }
    var q = (byte_at(o + select(16u, 48u, q5) + 32u * (j / 2u) + l) >> (4u * (j & 1u))) & 0xfu;
    if (q5) { q = q | (((byte_at(o + 16u + l) >> j) & 1u) << 4u); }
    return f16_to_f32(u16_at(o)) * f32(sc) * f32(q) - f16_to_f32(u16_at(o + 2u)) * f32(mn);
  }
  if (TYPE == 14u) {  // Q6_K (gemv.wgsl has the layout)
    let o = base + (i / 256u) * 210u;
    let e = i % 256u;
    let h = e / 128u;
    let t = (e % 128u) / 32u;
    let l = e % 32u;
    let lo = (byte_at(o + 64u * h + 32u * (t & 1u) + l) >> (4u * (t >> 1u))) & 0xfu;
    let hi = (byte_at(o + 128u + 32u * h + l) >> (2u * t)) & 3u;
    return f16_to_f32(u16_at(o + 208u)) * sbyte_at(o + 192u + 8u * h + 2u * t + l / 16u) * f32(i32(lo | (hi << 4u)) - 32);
  }
  return 0.0;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let i = group_index(wid, nwg) * WG + tid;
  if (i >= p.cols) { return; }
  OUT[p.out_offset + i] = dequant(p.byte_skew, i);
}
