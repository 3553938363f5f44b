// RoPE in place on rows x heads x head_dim values, row r at position POS[0] + r: one invocation per
// (row, head, pair i). The angle is pos * theta_scale^i built by repeated f32 multiplication (as the CPU
// does), divided by FREQ[i] when freqs != 0; sin/cos from sincos_ (common.wgsl). neox != 0 pairs i with
// i + rope_dim/2 (NEOX), else 2i with 2i + 1.

@group(0) @binding(0) var<storage, read_write> V: array<f32>;
@group(0) @binding(1) var<storage, read> POS: array<i32>;
@group(0) @binding(2) var<storage, read> FREQ: array<f32>;  // a placeholder when freqs == 0
struct Params { heads: u32, head_dim: u32, rope_dim: u32, theta_scale: f32, rows: u32, neox: u32, freqs: u32 }
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let half_ = p.rope_dim / 2u;
  let t = group_index(wid, nwg) * WG + tid;
  if (t >= p.rows * p.heads * half_) { return; }
  let h = t / half_;  // h counts heads over all rows
  let i = t % half_;
  let row = h / p.heads;
  var theta = f32(POS[0] + i32(row));
  for (var k = 0u; k < i; k++) { theta = theta * p.theta_scale; }
  if (p.freqs != 0u) { theta = theta / FREQ[i]; }
  let sc = sincos_(theta);
  let neox = p.neox != 0u;
  let a = h * p.head_dim + select(2u * i, i, neox);
  let b = h * p.head_dim + select(2u * i + 1u, i + half_, neox);
  let x0 = V[a];
  let x1 = V[b];
  V[a] = x0 * sc.y - x1 * sc.x;
  V[b] = x0 * sc.x + x1 * sc.y;
}
