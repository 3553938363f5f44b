// y[m][row] (+)= sum_i W[row][i] x[m][i]: quantized (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K) or float (F32, F16,
// BF16) weights in their GGUF layouts, f32 activations. A workgroup takes WG / TPR weight rows of
// activation row m = workgroup_id.z; each row's TPR invocations stride over its units (32-element blocks
// or sub-blocks; single elements for float weights), then reduce in a segmented tree (Note [WebGPU GEMV
// rows per workgroup]). Decode runs m = 1; prefill dispatches every prompt row at once (z), re-reading
// the weights per row (no tiled GEMM yet: docs/WEBGPU.md).
// Weights are read as 32-bit words (WGSL storage has no 8/16-bit types): Q4_0 (18 bytes), Q8_0 (34) and
// Q6_K (210) blocks start at even, not always 4-byte aligned, offsets (word_at, u16_at).
// Note [WebGPU weights in pieces]: the glue binds a weight matrix in pieces of whole rows when it is
// larger than maxStorageBufferBindingSize; a piece starts at an offset rounded down to
// minStorageBufferOffsetAlignment, so row first_row begins byte_skew bytes into the binding.
// Override TYPE: the GGUF type id (0 F32, 1 F16, 2 Q4_0, 8 Q8_0, 12 Q4_K, 13 Q5_K, 14 Q6_K, 30 BF16).

override TYPE: u32 = 0u;
// Note [WebGPU GEMV rows per workgroup]: invocations per weight row (a power of two <= WG). Fewer, more
// rows per workgroup: fewer workgroups and barrier steps (log2 TPR), which is what costs on a CPU
// implementation such as SwiftShader (a workgroup barrier switches every invocation); more: more loads in
// flight per row on a GPU. The glue picks it (Kernels option gemvThreadsPerRow).
override TPR: u32 = 8u;

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
// rows: the whole matrix's (Y's stride); piece_rows rows from first_row are this dispatch's.
struct Params { rows: u32, cols: u32, row_bytes: u32, accumulate: u32, first_row: u32, piece_rows: u32, byte_skew: u32 }
@group(0) @binding(3) var<uniform> p: Params;

// The 4 bytes at byte offset o (any alignment): the words it spans, shifted together. The word holding
// the matrix's last bytes may reach past them: the glue pads weight buffers and bindings by a word.
fn word_at(o: u32) -> u32 {
  let s = (o & 3u) * 8u;
  let lo = W[o >> 2u];
  if (s == 0u) { return lo; }
  return (lo >> s) | (W[(o >> 2u) + 1u] << (32u - s));
}
fn u16_at(o: u32) -> u32 { return (W[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu; }  // o even
fn byte_at(o: u32) -> u32 { return (W[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu; }
fn sbyte(w: u32, i: u32) -> f32 { return f32(extractBits(bitcast<i32>(w), 8u * i, 8u)); }  // signed byte i of w

// The partial dot product of this invocation (lane tid of TPR) over row `base` (its byte offset in W)
// with x row xo.
fn row_dot(base: u32, xo: u32, tid: u32) -> f32 {
  var acc = 0.0;
  let cols = p.cols;
  if (TYPE == 0u) {  // F32
    for (var i = tid; i < cols; i += TPR) { acc += bitcast<f32>(W[(base >> 2u) + i]) * X[xo + i]; }
  } else if (TYPE == 1u) {  // F16: activations rounded to f16, as the CPU pass
    for (var i = tid; i < cols; i += TPR) { acc += f16_to_f32(u16_at(base + 2u * i)) * round_f16(X[xo + i]); }
  } else if (TYPE == 30u) {  // BF16: the top 16 bits of an f32
    for (var i = tid; i < cols; i += TPR) { acc += bitcast<f32>(u16_at(base + 2u * i) << 16u) * X[xo + i]; }
  } else if (TYPE == 2u) {  // Q4_0: 18-byte blocks (f16 d, 16 bytes: element j low nibble, j + 16 high), x = (q - 8) d
    for (var b = tid; b < cols / 32u; b += TPR) {
      let o = base + b * 18u;
      let d = f16_to_f32(u16_at(o));
      var s = 0.0;
      for (var k = 0u; k < 4u; k++) {
        let q4 = word_at(o + 2u + 4u * k);
        for (var j = 0u; j < 4u; j++) {
          let lo = f32(i32((q4 >> (8u * j)) & 0xfu) - 8);
          let hi = f32(i32((q4 >> (8u * j + 4u)) & 0xfu) - 8);
          let i = xo + b * 32u + 4u * k + j;
          s += lo * X[i] + hi * X[i + 16u];
        }
      }
      acc += d * s;
    }
  } else if (TYPE == 8u) {  // Q8_0: 34-byte blocks (f16 d, 32 int8)
    for (var b = tid; b < cols / 32u; b += TPR) {
      let o = base + b * 34u;
      let d = f16_to_f32(u16_at(o));
      var s = 0.0;
      for (var k = 0u; k < 8u; k++) {
        let q4 = word_at(o + 2u + 4u * k);
        for (var j = 0u; j < 4u; j++) { s += sbyte(q4, j) * X[xo + b * 32u + 4u * k + j]; }
      }
      acc += d * s;
    }
  } else if (TYPE == 12u || TYPE == 13u) {
    // Q4_K: 144-byte blocks (f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 of nibbles). Q5_K: 176
    // bytes, the same with 32 bytes of fifth bits (qh) before the nibbles: element l of sub-block j takes
    // bit j of qh[l]. x = d sc q - dmin mn. Both keep 4-byte alignment (with an aligned row start).
    let q5 = TYPE == 13u;
    let block_bytes = select(144u, 176u, q5);
    let qs_off = select(16u, 48u, q5);
    for (var u = tid; u < cols / 32u; u += TPR) {
      let b = u / 8u;
      let j = u % 8u;  // block and sub-block
      let o = base + b * block_bytes;
      let dd = word_at(o);
      let d = f16_to_f32(dd);
      let dmin = f16_to_f32(dd >> 16u);
      var sc: u32;
      var mn: u32;
      if (j < 4u) {
        sc = byte_at(o + 4u + j) & 63u;
        mn = byte_at(o + 8u + j) & 63u;
      } else {
        sc = (byte_at(o + 8u + j) & 0xfu) | ((byte_at(o + j) >> 6u) << 4u);
        mn = (byte_at(o + 8u + j) >> 4u) | ((byte_at(o + 4u + j) >> 6u) << 4u);
      }
      let c = j / 2u;
      let shift = (j & 1u) * 4u;
      var sq = 0.0;
      var sx = 0.0;
      for (var k = 0u; k < 8u; k++) {
        let q4 = word_at(o + qs_off + 32u * c + 4u * k);
        let qh = select(0u, word_at(o + 16u + 4u * k), q5);  // qh[4k .. 4k+3]
        for (var l = 0u; l < 4u; l++) {
          let q = f32(((q4 >> (8u * l + shift)) & 0xfu) | (((qh >> (8u * l + j)) & 1u) << 4u));
          let xv = X[xo + b * 256u + 32u * j + 4u * k + l];
          sq += q * xv;
          sx += xv;
        }
      }
      acc += d * f32(sc) * sq - dmin * f32(mn) * sx;
    }
  } else if (TYPE == 14u) {
    // Q6_K: 210-byte blocks (ql[128] low nibbles, qh[64] 2-bit high parts, int8 scales[16], f16 d) at
    // even offsets. Half h (128 elements) uses ql[64h..], qh[32h..], scales[8h..]; its quarter t (32
    // elements, l < 32) is q = (ql[64h + 32(t&1) + l] >> 4(t>>1)) & 15 | ((qh[32h + l] >> 2t) & 3) << 4,
    // x = d scales[8h + 2t + l/16] (q - 32).
    for (var u = tid; u < cols / 32u; u += TPR) {
      let b = u / 8u;
      let h = (u % 8u) / 4u;
      let t = u % 4u;  // block, half, quarter
      let o = base + b * 210u;
      let d = f16_to_f32(u16_at(o + 208u));
      let ql = o + 64u * h + 32u * (t & 1u);
      let qh = o + 128u + 32u * h;
      let lshift = 4u * (t >> 1u);
      let hshift = 2u * t;
      for (var g = 0u; g < 2u; g++) {  // 16 elements per scale
        let sc = f32(extractBits(i32(byte_at(o + 192u + 8u * h + 2u * t + g)), 0u, 8u));
        var s = 0.0;
        for (var k = 4u * g; k < 4u * g + 4u; k++) {
          let lw = word_at(ql + 4u * k);
          let hw = word_at(qh + 4u * k);
          for (var l = 0u; l < 4u; l++) {
            let q = f32(i32(((lw >> (8u * l + lshift)) & 0xfu) | (((hw >> (8u * l + hshift)) & 3u) << 4u)) - 32);
            s += q * X[xo + b * 256u + 128u * h + 32u * t + 4u * k + l];
          }
        }
        acc += d * sc * s;
      }
    }
  }
  return acc;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let lane = tid % TPR;
  let r = (wid.y * nwg.x + wid.x) * (WG / TPR) + tid / TPR;  // the row within the piece
  let m = wid.z;
  var v = 0.0;
  if (r < p.piece_rows) { v = row_dot(p.byte_skew + r * p.row_bytes, m * p.cols, lane); }
  // The segmented tree: each row's TPR partial sums into its first lane (every invocation takes part:
  // the barriers need uniform control flow).
  red_[tid] = v;
  workgroupBarrier();
  for (var s = TPR / 2u; s > 0u; s = s >> 1u) {
    if (lane < s) { red_[tid] = red_[tid] + red_[tid + s]; }
    workgroupBarrier();
  }
  if (lane == 0u && r < p.piece_rows) {
    let at = m * p.rows + p.first_row + r;
    if (p.accumulate != 0u) { Y[at] = Y[at] + red_[tid]; } else { Y[at] = red_[tid]; }
  }
}
