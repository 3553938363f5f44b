// trueno's WebGPU backend: the JavaScript glue that compiles the WGSL shaders (src/webgpu/shaders) and
// records the forward pass's kernels. The same file runs in a browser (navigator.gpu) and in Node (npm
// `webgpu`, Dawn: node_device.mjs); it calls WebGPU directly, not through emscripten's -sUSE_WEBGPU
// bindings (3.1.6's predate the API browsers ship: ../shared/docs/browser-testing.md).
//
//   const k = await Kernels.create(device, loadShader);   // loadShader(name) -> WGSL text (async)
//   const rec = k.recorder();
//   k.gemv(rec, { type: 'q4_k', w, rows, cols, x, y });    // GPUBuffers; every op: the buffers + shapes
//   await rec.submit();
//
// f32 path only: every shader runs without optional features (SwiftShader and many desktop GPUs lack
// `shader-f16`); the KV cache holds f16 values as pairs in u32 words, converted in integer arithmetic.
// Contract violations (shapes, sizes) throw an Error naming the op, the value and the limit.

// GGUF type ids (../shared/docs/quant-formats.md) of the weight types gemv reads, with their block sizes.
export const WEIGHT_TYPES = {
  f32: { id: 0, elems: 1, bytes: 4 },
  f16: { id: 1, elems: 1, bytes: 2 },
  q4_0: { id: 2, elems: 32, bytes: 18 },
  q8_0: { id: 8, elems: 32, bytes: 34 },
  q4_k: { id: 12, elems: 256, bytes: 144 },
  q5_k: { id: 13, elems: 256, bytes: 176 },
  q6_k: { id: 14, elems: 256, bytes: 210 },
  bf16: { id: 30, elems: 1, bytes: 2 },
};

// Every shader (shaders/<name>.wgsl), each prepended with shaders/common.wgsl.
export const SHADERS = ['gemv', 'embed', 'rmsnorm', 'rope', 'kv_append', 'attention_scores', 'attention_values',
  'attention_combine', 'swiglu', 'add', 'argmax'];

const WG = 64;  // common.wgsl's WG: every shader's workgroup size and the attention chunk
const MAX_GROUPS = 65535;  // maxComputeWorkgroupsPerDimension's default

export function weightType(type) {
  const t = WEIGHT_TYPES[type];
  if (!t) throw new Error(`webgpu gemv: weight type '${type}' is not supported (supported: ${Object.keys(WEIGHT_TYPES).join(', ')})`);
  return t;
}

export function rowBytes(type, cols) {
  const t = weightType(type);
  if (cols % t.elems !== 0) throw new Error(`webgpu gemv: ${cols} columns are not whole ${type} blocks of ${t.elems}`);
  return (cols / t.elems) * t.bytes;
}

function need(ok, what) {
  if (!ok) throw new Error(`webgpu ${what}`);
}

// count workgroups as a grid of at most MAX_GROUPS in x (the shaders' group_index reads y * nx + x).
function grid(count) {
  if (count <= MAX_GROUPS) return [Math.max(count, 1), 1];
  const y = Math.ceil(count / MAX_GROUPS);
  return [Math.ceil(count / y), y];
}

// Note [WebGPU recording]
// A Recorder holds one command encoder and one compute pass: every op appends dispatches, and WebGPU
// orders them (a dispatch sees the storage writes of the ones before it in the pass). Each dispatch's
// scalars go in a small uniform buffer of its own (WebGPU has no push constants), destroyed right after
// the submission (WebGPU keeps a destroyed buffer's memory until the work using it is done).
class Recorder {
  constructor(device) {
    this.device = device;
    this.encoder = device.createCommandEncoder();
    this.pass = this.encoder.beginComputePass();
    this.uniforms = [];
    this.dispatches = 0;
  }

  uniform(words) {  // words: [{u: n} | {f: x} | {i: n}] in the struct's order
    const size = Math.max(16, Math.ceil((words.length * 4) / 16) * 16);
    const buffer = this.device.createBuffer({ size, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
    const view = new DataView(buffer.getMappedRange());
    words.forEach((w, i) => {
      if ('f' in w) view.setFloat32(4 * i, w.f, true);
      else if ('i' in w) view.setInt32(4 * i, w.i, true);
      else view.setUint32(4 * i, w.u, true);
    });
    buffer.unmap();
    this.uniforms.push(buffer);
    return buffer;
  }

  // entries: GPUBuffer or {buffer, offset, size} per binding, in binding order.
  dispatch(pipeline, entries, x, y = 1, z = 1) {
    const bindGroup = this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: entries.map((e, binding) => ({ binding, resource: e.buffer ? e : { buffer: e } })),
    });
    this.pass.setPipeline(pipeline);
    this.pass.setBindGroup(0, bindGroup);
    this.pass.dispatchWorkgroups(x, y, z);
    ++this.dispatches;
  }

  async submit() {
    this.pass.end();
    this.device.queue.submit([this.encoder.finish()]);
    for (const b of this.uniforms) b.destroy();  // allowed once submitted: WebGPU frees them after the work
    this.uniforms = [];
  }
}

export class Kernels {
  // device: a GPUDevice; loadShader(name): the WGSL text of shaders/<name>.wgsl (a Promise or a string).
  // options.maxBindingBytes: bind storage buffers in pieces of at most this many bytes (default: the
  // device's maxStorageBufferBindingSize; the tests force small pieces). options.gemvThreadsPerRow: Note
  // [WebGPU GEMV rows per workgroup] (a power of two, 1..64; default 8).
  static async create(device, loadShader, options = {}) {
    const k = new Kernels(device, options);
    const common = await loadShader('common');
    const sources = await Promise.all(SHADERS.map((name) => loadShader(name)));
    device.pushErrorScope('validation');
    const modules = new Map();
    for (let i = 0; i < SHADERS.length; ++i) {
      const module = device.createShaderModule({ label: SHADERS[i], code: `${common}\n${sources[i]}` });
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length) {
        device.popErrorScope();
        throw new Error(`webgpu: shaders/${SHADERS[i]}.wgsl does not compile:\n` +
          errors.map((m) => `  line ${m.lineNum - common.split('\n').length}: ${m.message}`).join('\n'));
      }
      modules.set(SHADERS[i], module);
    }
    k.modules = modules;
    for (const name of SHADERS) if (name !== 'gemv' && name !== 'embed') k.pipeline(name);
    for (const type of Object.keys(WEIGHT_TYPES)) {
      k.pipeline('gemv', { TYPE: WEIGHT_TYPES[type].id, TPR: k.tpr });
      k.pipeline('embed', { TYPE: WEIGHT_TYPES[type].id });
    }
    const error = await device.popErrorScope();
    if (error) throw new Error(`webgpu: building the pipelines: ${error.message}`);
    return k;
  }

  constructor(device, options) {
    this.device = device;
    this.limits = device.limits;
    this.maxBindingBytes = Math.min(options.maxBindingBytes ?? Infinity, device.limits.maxStorageBufferBindingSize);
    this.align = device.limits.minStorageBufferOffsetAlignment;
    this.tpr = options.gemvThreadsPerRow ?? 8;
    need([1, 2, 4, 8, 16, 32, 64].includes(this.tpr), `gemvThreadsPerRow ${this.tpr} (a power of two, 1..64)`);
    this.pipelines = new Map();
  }

  pipeline(name, constants = {}) {
    const key = `${name}:${JSON.stringify(constants)}`;
    let p = this.pipelines.get(key);
    if (!p) {
      p = this.device.createComputePipeline({ label: key, layout: 'auto', compute: { module: this.modules.get(name), entryPoint: 'main', constants } });
      this.pipelines.set(key, p);
    }
    return p;
  }

  recorder() { return new Recorder(this.device); }

  // A storage buffer of at least `bytes` (rounded up to a word, plus one word: Note [WebGPU weights in
  // pieces] reads may reach one word past a matrix), filled from `data` (an ArrayBuffer view) if given.
  buffer(bytes, data = null) {
    const size = Math.ceil(bytes / 4) * 4 + 4;
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const buffer = this.device.createBuffer({ size, usage, mappedAtCreation: data !== null });
    if (data !== null) {
      new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      buffer.unmap();
    }
    return buffer;
  }

  // The first `bytes` of a buffer, read back (an ArrayBuffer).
  async read(buffer, bytes) {
    const size = Math.ceil(bytes / 4) * 4;
    const staging = this.device.createBuffer({ size: Math.max(size, 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, 0, staging, 0, size);
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = staging.getMappedRange().slice(0, bytes);
    staging.destroy();
    return out;
  }

  // A whole buffer as one binding, refused by name when it is over the binding limit (only weights are
  // bound in pieces: activations, caches and scratch stay far below it for the models this targets).
  whole(buffer, what) {
    need(buffer.size <= this.maxBindingBytes, `${what}: a buffer of ${buffer.size} bytes is over maxStorageBufferBindingSize ` +
      `(${this.maxBindingBytes}); only gemv weights are bound in pieces`);
    return buffer;
  }

  // y[m][rows] (+)= W x[m] for m < mRows: W rows x cols of `type` in its GGUF layout (Note [WebGPU
  // weights in pieces]: bound in pieces of whole rows below maxBindingBytes), x mRows x cols f32.
  gemv(rec, { type, w, rows, cols, x, y, m = 1, accumulate = false }) {
    const rb = rowBytes(type, cols);
    need(w.size >= rows * rb, `gemv: W of ${w.size} bytes, ${rows} rows of ${rb} bytes need ${rows * rb}`);
    need(x.size >= m * cols * 4 && y.size >= m * rows * 4, `gemv: x or y too small for ${m} x ${cols} -> ${m} x ${rows}`);
    need(m >= 1 && m <= MAX_GROUPS, `gemv: ${m} activation rows (1..${MAX_GROUPS})`);
    // A piece: its start rounded down to the offset alignment (skew < align), its rows, a word of slack.
    const perPiece = Math.floor((this.maxBindingBytes - this.align - 8) / rb);
    need(perPiece >= 1, `gemv: one ${type} row of ${rb} bytes does not fit a binding of ${this.maxBindingBytes} bytes`);
    const pipeline = this.pipeline('gemv', { TYPE: WEIGHT_TYPES[type].id, TPR: this.tpr });
    for (let first = 0; first < rows; first += perPiece) {
      const count = Math.min(perPiece, rows - first);
      const start = first * rb, offset = start - (start % this.align);
      const size = Math.min(Math.ceil((start + count * rb - offset) / 4) * 4 + 4, w.size - offset);
      const u = rec.uniform([{ u: rows }, { u: cols }, { u: rb }, { u: accumulate ? 1 : 0 }, { u: first }, { u: count }, { u: start - offset }]);
      const [gx, gy] = grid(Math.ceil(count / (WG / this.tpr)));
      rec.dispatch(pipeline, [{ buffer: w, offset, size }, this.whole(x, 'gemv x'), this.whole(y, 'gemv y'), u], gx, gy, m);
    }
  }

  // out[t] = row tokens[t] of W (rows x cols of `type`, e.g. the token embeddings) as f32; tokens: host
  // integers (one dispatch each: the row's piece of W is bound, Note [WebGPU weights in pieces]).
  embed(rec, { type, w, rows, cols, tokens, out }) {
    const rb = rowBytes(type, cols);
    need(out.size >= tokens.length * cols * 4, `embed: out too small for ${tokens.length} rows of ${cols}`);
    need(rb + this.align + 8 <= this.maxBindingBytes, `embed: one ${type} row of ${rb} bytes does not fit a binding of ${this.maxBindingBytes} bytes`);
    const pipeline = this.pipeline('embed', { TYPE: WEIGHT_TYPES[type].id });
    tokens.forEach((token, t) => {
      need(Number.isInteger(token) && token >= 0 && token < rows, `embed: token id ${token} is outside [0, ${rows})`);
      const start = token * rb, offset = start - (start % this.align);
      const size = Math.min(Math.ceil((start + rb - offset) / 4) * 4 + 4, w.size - offset);
      const u = rec.uniform([{ u: cols }, { u: start - offset }, { u: t * cols }]);
      const [gx, gy] = grid(Math.ceil(cols / WG));
      rec.dispatch(pipeline, [{ buffer: w, offset, size }, this.whole(out, 'embed out'), u], gx, gy);
    });
  }

  // out[r] = rmsnorm(x[r]) * weight for count rows of n.
  rmsnorm(rec, { x, weight, out, n, count = 1, eps }) {
    const u = rec.uniform([{ u: n }, { f: eps }, { u: count }]);
    const [gx, gy] = grid(count);
    rec.dispatch(this.pipeline('rmsnorm'), [this.whole(x, 'rmsnorm x'), weight, this.whole(out, 'rmsnorm out'), u], gx, gy);
  }

  // RoPE in place on rows x heads x headDim values, row r at position pos[0] + r (pos: an i32 buffer).
  rope(rec, { v, pos, heads, headDim, ropeDim, thetaScale, freqs = null, neox = false, rows = 1 }) {
    need(ropeDim % 2 === 0 && ropeDim <= headDim, `rope: rope_dim ${ropeDim} (even, <= head_dim ${headDim})`);
    const u = rec.uniform([{ u: heads }, { u: headDim }, { u: ropeDim }, { f: thetaScale }, { u: rows }, { u: neox ? 1 : 0 }, { u: freqs ? 1 : 0 }]);
    const [gx, gy] = grid(Math.ceil((rows * heads * ropeDim) / 2 / WG));
    rec.dispatch(this.pipeline('rope'), [this.whole(v, 'rope v'), pos, freqs ?? pos, u], gx, gy);
  }

  // k, v (rows x n f32) into slots pos[0] + r of the f16 caches (slots x n halves).
  kvAppend(rec, { k, v, kCache, vCache, pos, n, rows = 1 }) {
    need(n % 2 === 0, `kv_append: n = ${n} (must be even: halves are stored in pairs)`);
    const u = rec.uniform([{ u: n }, { u: rows }]);
    const [gx, gy] = grid(Math.ceil((rows * n) / 2 / WG));
    rec.dispatch(this.pipeline('kv_append'), [k, v, this.whole(kCache, 'kv_append k cache'), this.whole(vCache, 'kv_append v cache'), pos, u], gx, gy);
  }

  // Note [WebGPU decode attention]
  // The three dispatches of Note [Vulkan decode attention] (src/vulkan/ops.cpp): per (chunk of WG
  // positions, head, row) the scores and the chunk's max and sum of exp; per (chunk, head, row) the
  // global statistics, the f16-rounded softmax weights times the chunk's values; per (head, row) the sum
  // of the chunks. Chunks past a row's position return at once, so `positions` only bounds the grid.
  // Row r (of rows, from row0 in q and att) attends to positions 0..pos[0] + row0 + r: a prompt's rows
  // run in one call (prefill), decode is rows = 1.
  attentionScratch(nCtx, heads, headDim, rows = 1) {
    const chunks = Math.ceil(nCtx / WG);
    return { nCtx, heads, headDim, rows, chunks,
      scores: this.buffer(rows * heads * nCtx * 4), stats: this.buffer(rows * heads * chunks * 8), parts: this.buffer(rows * heads * chunks * headDim * 4) };
  }

  attention(rec, { q, kCache, vCache, pos, scratch, att, group, kvRow, positions, rows = 1, row0 = 0 }) {
    const { heads, headDim, nCtx, chunks } = scratch;
    need(headDim % 2 === 0 && headDim <= 256, `attention: head_dim ${headDim} (even, 2..256)`);
    need(group >= 1 && heads % group === 0 && (heads / group) * headDim <= kvRow && kvRow % 2 === 0,
      `attention: ${heads} heads in groups of ${group} do not fit KV rows of ${kvRow} (even)`);
    need(positions >= 1 && positions <= nCtx && rows <= scratch.rows, `attention: ${positions} positions x ${rows} rows, scratch for ${nCtx} x ${scratch.rows}`);
    const launched = Math.ceil(positions / WG);
    const u = rec.uniform([{ u: heads }, { u: headDim }, { u: group }, { u: kvRow }, { u: chunks }, { u: launched }, { u: nCtx }, { u: rows }, { u: row0 },
      { f: 1 / Math.sqrt(headDim) }]);
    const kc = this.whole(kCache, 'attention k cache'), vc = this.whole(vCache, 'attention v cache');
    // The scratch grows with rows x heads x nCtx: a long prompt is run in chunks of rows (row0).
    for (const [b, what] of [[scratch.scores, 'scores'], [scratch.stats, 'statistics'], [scratch.parts, 'partial outputs']]) this.whole(b, `attention ${what} scratch`);
    const [gx, gy] = grid(launched * heads * rows);
    rec.dispatch(this.pipeline('attention_scores'), [q, kc, pos, scratch.scores, scratch.stats, u], gx, gy);
    rec.dispatch(this.pipeline('attention_values'), [vc, pos, scratch.scores, scratch.stats, scratch.parts, u], gx, gy);
    const [hx, hy] = grid(heads * rows);
    rec.dispatch(this.pipeline('attention_combine'), [pos, scratch.parts, att, u], hx, hy);
  }

  // g = silu(g) * u, in place, n values.
  swiglu(rec, { g, u: up, n }) {
    const u = rec.uniform([{ u: n }]);
    const [gx, gy] = grid(Math.ceil(n / WG));
    rec.dispatch(this.pipeline('swiglu'), [this.whole(g, 'swiglu g'), this.whole(up, 'swiglu u'), u], gx, gy);
  }

  // y[i] += x[i % period] for i < n (the residual add; period < n: a bias on every row).
  add(rec, { y, x, n, period = n }) {
    const u = rec.uniform([{ u: n }, { u: period }]);
    const [gx, gy] = grid(Math.ceil(n / WG));
    rec.dispatch(this.pipeline('add'), [this.whole(y, 'add y'), this.whole(x, 'add x'), u], gx, gy);
  }

  // out[r] (u32) = argmax of row r of x, count rows of n.
  argmax(rec, { x, out, n, count = 1 }) {
    const u = rec.uniform([{ u: n }, { u: count }]);
    const [gx, gy] = grid(count);
    rec.dispatch(this.pipeline('argmax'), [this.whole(x, 'argmax x'), out, u], gx, gy);
  }
}
