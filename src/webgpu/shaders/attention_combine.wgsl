// Decode attention, step 3 of 3: the head's output, the sum of its chunks' shares (already normalized
// by the global softmax sum). One workgroup per (head, row).

@group(0) @binding(0) var<storage, read> POS: array<i32>;
@group(0) @binding(1) var<storage, read> O: array<f32>;           // [rows * heads][chunks][head_dim]
@group(0) @binding(2) var<storage, read_write> ATT: array<f32>;   // [rows * heads][head_dim]
struct Params { heads: u32, head_dim: u32, group: u32, kv_row: u32, chunks: u32, launched: u32, n_ctx: u32,
                rows: u32, row0: u32, scale: f32 }
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let rh = group_index(wid, nwg);  // rh = row * heads + head
  let row = rh / p.heads;
  if (row >= p.rows) { return; }
  let used = (u32(POS[0]) + p.row0 + row + WG) / WG;  // chunks of WG positions covering the row's pos + 1
  for (var d = tid; d < p.head_dim; d += WG) {
    var acc = 0.0;
    for (var k = 0u; k < used; k++) { acc += O[(rh * p.chunks + k) * p.head_dim + d]; }
    ATT[(p.row0 * p.heads + rh) * p.head_dim + d] = acc;
  }
}
