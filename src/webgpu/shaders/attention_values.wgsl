// Decode attention, step 2 of 3: for row and head rh and chunk c, the softmax weights p_t = exp(S[rh][t]
// - M) / L (M, L over every chunk's ML), rounded to f16 as the CPU does, times the f16 cached values: the
// chunk's share of the head's output, O[rh][c][d]. One workgroup per (chunk, head, row).

@group(0) @binding(0) var<storage, read> VCache: array<u32>;  // [slots][kv_row] f16, as pairs
@group(0) @binding(1) var<storage, read> POS: array<i32>;
@group(0) @binding(2) var<storage, read> S: array<f32>;
@group(0) @binding(3) var<storage, read> ML: array<f32>;
@group(0) @binding(4) var<storage, read_write> O: array<f32>;  // [rows * heads][chunks][head_dim]
struct Params { heads: u32, head_dim: u32, group: u32, kv_row: u32, chunks: u32, launched: u32, n_ctx: u32,
                rows: u32, row0: u32, scale: f32 }
@group(0) @binding(5) var<uniform> p: Params;

var<workgroup> p_: array<f32, WG>;

fn v_at(t: u32, col: u32) -> f32 {  // the cached value at slot t, column col of the row
  let i = t * p.kv_row + col;
  let pair = unpack2x16float(VCache[i / 2u]);
  return select(pair.y, pair.x, (i & 1u) == 0u);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let gi = group_index(wid, nwg);
  let c = gi % p.launched;
  let rh = gi / p.launched;  // rh = row * heads + head
  let h = rh % p.heads;
  let row = rh / p.heads;
  let n = u32(POS[0]) + p.row0 + row + 1u;
  let t0 = c * WG;
  if (row >= p.rows || t0 >= n) { return; }  // uniform over the workgroup
  let kvh = h / p.group;
  let used = (n + WG - 1u) / WG;
  var m = -3.4028234e38;  // the lowest f32 (a -inf constant is not valid WGSL)
  for (var k = tid; k < used; k += WG) { m = max(m, ML[(rh * p.chunks + k) * 2u]); }
  let M = wg_max(m, tid);
  var l = 0.0;
  for (var k = tid; k < used; k += WG) { l += ML[(rh * p.chunks + k) * 2u + 1u] * exp(ML[(rh * p.chunks + k) * 2u] - M); }
  let L = wg_sum(l, tid);
  let t = t0 + tid;
  p_[tid] = select(0.0, round_f16(exp(S[rh * p.n_ctx + t] - M) / L), t < n);
  workgroupBarrier();
  let end = min(n - t0, WG);
  for (var d = tid; d < p.head_dim; d += WG) {
    var acc = 0.0;
    for (var j = 0u; j < end; j++) { acc += p_[j] * v_at(t0 + j, kvh * p.head_dim + d); }
    O[(rh * p.chunks + c) * p.head_dim + d] = acc;
  }
}
