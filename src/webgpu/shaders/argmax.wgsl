// OUT[r] = the index of the largest value of row r (greedy sampling), one workgroup per row: the first
// index on ties, and a NaN beats every number (the first NaN wins), as trueno::ops::argmax.

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> OUT: array<u32>;
struct Params { n: u32, count: u32 }
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> best_v: array<f32, WG>;
var<workgroup> best_i: array<u32, WG>;

const NONE: u32 = 0xffffffffu;

// NaN without relying on x != x (a compiler may assume no NaN): the exponent all ones, a mantissa.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// Whether (va, ia) comes before (vb, ib).
fn better(va: f32, ia: u32, vb: f32, ib: u32) -> bool {
  let na = is_nan(va);
  let nb = is_nan(vb);
  if (na || nb) { return na && (!nb || ia < ib); }
  return va > vb || (va == vb && ia < ib);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let row = group_index(wid, nwg);
  if (row >= p.count) { return; }  // uniform over the workgroup
  let base = row * p.n;
  var v = 0.0;
  var idx = NONE;
  for (var i = tid; i < p.n; i += WG) {
    let x = X[base + i];
    if (idx == NONE || better(x, i, v, idx)) { v = x; idx = i; }
  }
  best_v[tid] = v;
  best_i[tid] = idx;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (tid < s && best_i[tid + s] != NONE &&
        (best_i[tid] == NONE || better(best_v[tid + s], best_i[tid + s], best_v[tid], best_i[tid]))) {
      best_v[tid] = best_v[tid + s];
      best_i[tid] = best_i[tid + s];
    }
    workgroupBarrier();
  }
  if (tid == 0u) { OUT[row] = best_i[0]; }
}
