// k and v (rows x n f32 each) into slots POS[0] + row of the f16 caches (slots x n halves, stored as
// 32-bit words: no `shader-f16` needed), rounded to nearest even: one invocation per pair of values.

@group(0) @binding(0) var<storage, read> Kin: array<f32>;
@group(0) @binding(1) var<storage, read> Vin: array<f32>;
@group(0) @binding(2) var<storage, read_write> KCache: array<u32>;
@group(0) @binding(3) var<storage, read_write> VCache: array<u32>;
@group(0) @binding(4) var<storage, read> POS: array<i32>;
struct Params { n: u32, rows: u32 }  // n even
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let j = group_index(wid, nwg) * WG + tid;
  if (j >= p.rows * (p.n / 2u)) { return; }  // j counts pairs over all rows: row j / (n/2)
  let at = u32(POS[0]) * (p.n / 2u) + j;
  KCache[at] = f32_to_f16(Kin[2u * j]) | (f32_to_f16(Kin[2u * j + 1u]) << 16u);
  VCache[at] = f32_to_f16(Vin[2u * j]) | (f32_to_f16(Vin[2u * j + 1u]) << 16u);
}
