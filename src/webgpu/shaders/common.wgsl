// Prepended to every shader by the glue (js/trueno_webgpu.mjs; WGSL has no #include): the workgroup size,
// workgroup reductions (a shared-memory tree: the f32 path needs no optional feature), f16 conversion
// with round-to-nearest-even in integer arithmetic (no `shader-f16`), a portable sin/cos and the index of
// a workgroup in a 2D grid. The WGSL counterpart of src/vulkan/shaders/common.glsl.

const WG: u32 = 64u;  // every shader's workgroup size (a power of two: the reduction trees need one)

var<workgroup> red_: array<f32, WG>;

// The sum of v over the workgroup, returned to every invocation (tid: local_invocation_index). Call in
// uniform control flow.
fn wg_sum(v: f32, tid: u32) -> f32 {
  red_[tid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (tid < s) { red_[tid] = red_[tid] + red_[tid + s]; }
    workgroupBarrier();
  }
  let r = red_[0];
  workgroupBarrier();
  return r;
}

// The largest v over the workgroup, returned to every invocation. Call in uniform control flow.
fn wg_max(v: f32, tid: u32) -> f32 {
  red_[tid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (tid < s) { red_[tid] = max(red_[tid], red_[tid + s]); }
    workgroupBarrier();
  }
  let r = red_[0];
  workgroupBarrier();
  return r;
}

// f32 -> f16 bits, round to nearest even (pack2x16float leaves the rounding to the implementation).
fn f32_to_f16(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let e = (x >> 23u) & 0xffu;
  var m = x & 0x7fffffu;
  if (e == 0xffu) {
    return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u);
  }
  let ne = i32(e) - 112;  // the f16 exponent field
  if (ne >= 31) { return sign | 0x7c00u; }
  if (ne <= 0) {  // f16 subnormal or zero
    if (ne < -10) { return sign; }
    m = m | 0x800000u;
    let shift = u32(14 - ne);
    var h = m >> shift;
    let rem = m & ((1u << shift) - 1u);
    let half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (h & 1u) != 0u)) { h = h + 1u; }
    return sign | h;
  }
  var h = sign | (u32(ne) << 10u) | (m >> 13u);
  let rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) { h = h + 1u; }  // a carry rounds into the exponent
  return h;
}

fn f16_to_f32(bits: u32) -> f32 { return unpack2x16float(bits & 0xffffu).x; }
// x rounded to the nearest f16 (as the CPU pass rounds attention's q and weights).
fn round_f16(x: f32) -> f32 { return f16_to_f32(f32_to_f16(x)); }

// sin and cos of x: a 3-part Cody-Waite reduction by pi/2 and the Cephes minimax polynomials, a couple
// of ulp for |x| up to ~1e5 on every device (WGSL's sin/cos promise less). Returns (sin, cos).
fn sincos_(x: f32) -> vec2<f32> {
  let k = round(x * 0.636619772367581343);  // round: half to even
  var r = x - k * 1.5703125;
  r = r - k * 4.837512969970703125e-4;
  r = r - k * 7.54978995489188216e-8;
  let z = r * r;
  let ps = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
  let pc = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  let q = i32(k) & 3;
  if (q == 0) { return vec2<f32>(ps, pc); }
  if (q == 1) { return vec2<f32>(pc, -ps); }
  if (q == 2) { return vec2<f32>(-ps, -pc); }
  return vec2<f32>(-pc, ps);
}

// The workgroup index over a 2D grid (dispatches of more than 65535 workgroups use y).
fn group_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }
