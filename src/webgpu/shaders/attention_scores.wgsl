// Decode attention, step 1 of 3 (Note [WebGPU decode attention], js/trueno_webgpu.mjs; the same split as
// Note [Vulkan decode attention]): for query row r, head h (rh = r * heads + h) and the chunk of WG
// positions c, the scaled scores of q (rounded to f16, as the CPU) against the f16 cached keys, written
// to S[rh][t], and the chunk's softmax statistics (max, sum of exp) to ML[rh][c]. One workgroup per
// (chunk, head, row), one invocation per position; chunks past the row's position (POS[0] + row0 + r:
// causal) return at once.

@group(0) @binding(0) var<storage, read> Q: array<f32>;
@group(0) @binding(1) var<storage, read> KCache: array<u32>;  // [slots][kv_row] f16, as pairs
@group(0) @binding(2) var<storage, read> POS: array<i32>;
@group(0) @binding(3) var<storage, read_write> S: array<f32>;   // [rows * heads][n_ctx]
@group(0) @binding(4) var<storage, read_write> ML: array<f32>;  // [rows * heads][chunks][2]
struct Params { heads: u32, head_dim: u32, group: u32, kv_row: u32, chunks: u32, launched: u32, n_ctx: u32,
                rows: u32, row0: u32, scale: f32 }
@group(0) @binding(5) var<uniform> p: Params;

var<workgroup> q_: array<f32, 256>;  // head_dim <= 256

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
  let t = t0 + tid;
  let kvh = h / p.group;
  for (var d = tid; d < p.head_dim; d += WG) { q_[d] = round_f16(Q[((p.row0 * p.heads) + rh) * p.head_dim + d]); }
  workgroupBarrier();
  var s = -3.4028234e38;  // the lowest f32 (a -inf constant is not valid WGSL)
  if (t < n) {
    let w0 = (t * p.kv_row + kvh * p.head_dim) / 2u;
    var dot = 0.0;
    for (var i = 0u; i < p.head_dim / 2u; i++) {
      let k = unpack2x16float(KCache[w0 + i]);
      dot += k.x * q_[2u * i] + k.y * q_[2u * i + 1u];
    }
    s = dot * p.scale;
    S[rh * p.n_ctx + t] = s;
  }
  let m = wg_max(s, tid);
  let l = wg_sum(select(0.0, exp(s - m), t < n), tid);
  if (tid == 0u) {
    ML[(rh * p.chunks + c) * 2u] = m;
    ML[(rh * p.chunks + c) * 2u + 1u] = l;
  }
}
