// out[r] = x[r] * (1 / sqrt(mean(x[r]^2) + eps)) * w, one workgroup per row (trueno::ops::rmsnorm).

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> Wt: array<f32>;
@group(0) @binding(2) var<storage, read_write> O: array<f32>;
struct Params { n: u32, eps: f32, count: u32 }
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let row = group_index(wid, nwg);
  if (row >= p.count) { return; }  // uniform over the workgroup
  let base = row * p.n;
  var s = 0.0;
  for (var i = tid; i < p.n; i += WG) { s += X[base + i] * X[base + i]; }
  let ms = wg_sum(s, tid) / f32(p.n);
  let r = 1.0 / sqrt(ms + p.eps);
  for (var i = tid; i < p.n; i += WG) { O[base + i] = X[base + i] * r * Wt[i]; }
}
