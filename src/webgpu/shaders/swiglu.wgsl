// g[i] = silu(g[i]) * u[i] = g / (1 + exp(-g)) * u, in place (trueno::ops::swiglu).

@group(0) @binding(0) var<storage, read_write> G: array<f32>;
@group(0) @binding(1) var<storage, read> U: array<f32>;
struct Params { n: u32 }
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let i = group_index(wid, nwg) * WG + tid;
  if (i >= p.n) { return; }
  let g = G[i];
  G[i] = g / (1.0 + exp(-g)) * U[i];
}
