// y[i] += x[i % period]: one IEEE f32 addition per element (trueno::ops::add; period < n adds a bias to
// every row of y). The residual add of the forward pass.

@group(0) @binding(0) var<storage, read_write> Y: array<f32>;
@group(0) @binding(1) var<storage, read> X: array<f32>;
struct Params { n: u32, period: u32 }
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let i = group_index(wid, nwg) * WG + tid;
  if (i >= p.n) { return; }
  Y[i] = Y[i] + X[i % p.period];
}
