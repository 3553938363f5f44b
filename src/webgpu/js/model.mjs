// The forward pass of a Llama-family GGUF model (llama, qwen2) on WebGPU, driving the shaders through the
// glue (trueno_webgpu.mjs). The same sequence of named steps as realizar's CPU pass
// (realizar/src/model/forward.cpp), with its arithmetic choices (f16 KV cache, q and softmax weights
// rounded to f16, activations rounded to f16 before F16 weights: Note [F16 attention], Note [Reference
// arithmetic]), so its logits can be held to the CPU's by the parity gate's numbers
// (contracts/gpu-parity.yaml; forward_parity.mjs):
//   x = embed(tokens)
//   per layer:  h = rmsnorm(x) ; q,k,v = Wq h (+bq), Wk h (+bk), Wv h (+bv) ; rope(q, k) ; cache k, v
//               x += Wo attention(q, cache) ; h = rmsnorm(x) ; x += Wdown (silu(Wgate h) * (Wup h))
//   logits = Wout rmsnorm(x)
// One call = one submission: a prompt's T tokens at once (prefill: every GEMV with T activation rows,
// attention row r at position pos + r), or one token (decode). Shape letters: T tokens, d = n_embd,
// Q = n_head * head_dim, KV = n_head_kv * head_dim, F = n_ff, V = n_vocab.

function config(metadata, tensors) {
  const arch = metadata.get('general.architecture');
  if (arch !== 'llama' && arch !== 'qwen2') throw new Error(`webgpu model: architecture '${arch}' is not supported (llama, qwen2)`);
  const get = (key, fallback) => {
    const v = metadata.get(`${arch}.${key}`);
    if (v === undefined && fallback === undefined) throw new Error(`webgpu model: missing metadata ${arch}.${key}`);
    return v ?? fallback;
  };
  const embd = tensors.get('token_embd.weight');
  if (!embd) throw new Error("webgpu model: missing tensor 'token_embd.weight'");
  const c = { arch, nEmbd: get('embedding_length'), nLayer: get('block_count'), nHead: get('attention.head_count'), nFf: get('feed_forward_length') };
  c.nHeadKv = get('attention.head_count_kv', c.nHead);
  c.headDim = get('attention.key_length', c.nEmbd / c.nHead);
  c.ropeDim = get('rope.dimension_count', c.headDim);
  c.ropeBase = get('rope.freq_base', 10000);
  c.rmsEps = get('attention.layer_norm_rms_epsilon', 1e-5);
  c.ropeNeox = arch === 'qwen2';
  c.nVocab = embd.dims[1];
  return c;
}

export class WebGpuModel {
  // kernels: a Kernels (trueno_webgpu.mjs); gguf: readGguf's result; read(offset, length) -> Uint8Array
  // bytes of the file (one tensor at a time); nCtx: the KV cache's positions; maxTokens: the most tokens
  // one forward call takes.
  static async load(kernels, gguf, read, { nCtx = 256, maxTokens = 64 } = {}) {
    const m = new WebGpuModel(kernels, config(gguf.metadata, gguf.tensors), nCtx, maxTokens);
    const tensor = async (name, optional = false) => {
      const t = gguf.tensors.get(name);
      if (!t) {
        if (optional) return null;
        throw new Error(`webgpu model: missing tensor '${name}'`);
      }
      const bytes = await read(t.offset, t.bytes);
      return { type: t.type, rows: t.dims[1] ?? 1, cols: t.dims[0], buffer: kernels.buffer(t.bytes, bytes) };
    };
    m.tokenEmbd = await tensor('token_embd.weight');
    m.output = (await tensor('output.weight', true)) ?? m.tokenEmbd;  // tied: the embedding table
    m.outputNorm = await tensor('output_norm.weight');
    m.ropeFreqs = await tensor('rope_freqs.weight', true);
    for (let l = 0; l < m.c.nLayer; ++l) {
      const p = `blk.${l}.`, layer = {};
      for (const [key, name] of [['attnNorm', 'attn_norm'], ['wq', 'attn_q'], ['wk', 'attn_k'], ['wv', 'attn_v'], ['wo', 'attn_output'],
        ['ffnNorm', 'ffn_norm'], ['gate', 'ffn_gate'], ['up', 'ffn_up'], ['down', 'ffn_down']]) layer[key] = await tensor(`${p}${name}.weight`);
      for (const [key, name] of [['bq', 'attn_q'], ['bk', 'attn_k'], ['bv', 'attn_v']]) layer[key] = await tensor(`${p}${name}.bias`, true);
      m.layers.push(layer);
    }
    return m;
  }

  constructor(kernels, c, nCtx, maxTokens) {
    this.k = kernels;
    this.c = c;
    this.nCtx = nCtx;
    this.maxTokens = maxTokens;
    this.layers = [];
    const T = maxTokens, f32 = (n) => kernels.buffer(n * 4);
    this.q_dim = c.nHead * c.headDim;
    this.kvRow = c.nHeadKv * c.headDim;
    this.act = {  // activations, T rows each
      x: f32(T * c.nEmbd), xn: f32(T * c.nEmbd), q: f32(T * this.q_dim), k: f32(T * this.kvRow), v: f32(T * this.kvRow),
      att: f32(T * this.q_dim), proj: f32(T * c.nEmbd), gate: f32(T * c.nFf), up: f32(T * c.nFf), logits: f32(T * c.nVocab),
      pos: kernels.buffer(4), next: kernels.buffer(T * 4),
    };
    // Note [F16 attention]: the caches hold f16, as pairs of halves in u32 words. [nCtx][KV] per layer.
    this.kCache = [], this.vCache = [];
    for (let l = 0; l < c.nLayer; ++l) this.kCache.push(kernels.buffer(nCtx * this.kvRow * 2)), this.vCache.push(kernels.buffer(nCtx * this.kvRow * 2));
    this.scratch = kernels.attentionScratch(nCtx, c.nHead, c.headDim, T);
    this.thetaScale = Math.fround(Math.pow(c.ropeBase, -2 / c.ropeDim));
  }

  // Frees every buffer of the model (weights, activations, caches).
  destroy() {
    const weights = [this.tokenEmbd, this.output, this.outputNorm, this.ropeFreqs, ...this.layers.flatMap((L) => Object.values(L))];
    for (const t of new Set(weights)) t?.buffer.destroy();
    for (const b of [...Object.values(this.act), ...this.kCache, ...this.vCache, this.scratch.scores, this.scratch.stats, this.scratch.parts]) b.destroy();
  }

  linear(rec, w, x, y, T, accumulate = false) {
    this.k.gemv(rec, { type: w.type, w: w.buffer, rows: w.rows, cols: w.cols, x, y, m: T, accumulate });
  }

  // The logits ([T][V], a Float32Array) of tokens at positions pos .. pos + T - 1; the caches keep
  // their keys and values for the next call. With { logits: false } only each row's greedy token (argmax
  // on the GPU: 4 bytes read back per row instead of V floats), in `tokens`; with { greedy: true } both.
  async forward(tokens, pos, { logits = true, greedy = false } = {}) {
    const { k, c, act: a } = this, T = tokens.length, d = c.nEmbd;
    if (T < 1 || T > this.maxTokens) throw new Error(`webgpu model: ${T} tokens in one call (1..${this.maxTokens})`);
    if (pos + T > this.nCtx) throw new Error(`webgpu model: positions up to ${pos + T} past the cache of ${this.nCtx}`);
    this.k.device.queue.writeBuffer(a.pos, 0, new Int32Array([pos]));
    const rec = k.recorder();
    k.embed(rec, { type: this.tokenEmbd.type, w: this.tokenEmbd.buffer, rows: this.tokenEmbd.rows, cols: d, tokens, out: a.x });
    const rope = { pos: a.pos, headDim: c.headDim, ropeDim: c.ropeDim, thetaScale: this.thetaScale, freqs: this.ropeFreqs?.buffer ?? null,
      neox: c.ropeNeox, rows: T };
    this.layers.forEach((L, l) => {
      k.rmsnorm(rec, { x: a.x, weight: L.attnNorm.buffer, out: a.xn, n: d, count: T, eps: c.rmsEps });
      this.linear(rec, L.wq, a.xn, a.q, T), this.linear(rec, L.wk, a.xn, a.k, T), this.linear(rec, L.wv, a.xn, a.v, T);
      if (L.bq) k.add(rec, { y: a.q, x: L.bq.buffer, n: T * this.q_dim, period: this.q_dim });
      if (L.bk) k.add(rec, { y: a.k, x: L.bk.buffer, n: T * this.kvRow, period: this.kvRow });
      if (L.bv) k.add(rec, { y: a.v, x: L.bv.buffer, n: T * this.kvRow, period: this.kvRow });
      k.rope(rec, { v: a.q, heads: c.nHead, ...rope });
      k.rope(rec, { v: a.k, heads: c.nHeadKv, ...rope });
      k.kvAppend(rec, { k: a.k, v: a.v, kCache: this.kCache[l], vCache: this.vCache[l], pos: a.pos, n: this.kvRow, rows: T });
      k.attention(rec, { q: a.q, kCache: this.kCache[l], vCache: this.vCache[l], pos: a.pos, scratch: this.scratch, att: a.att,
        group: c.nHead / c.nHeadKv, kvRow: this.kvRow, positions: pos + T, rows: T });
      this.linear(rec, L.wo, a.att, a.x, T, /*accumulate=*/true);  // x += Wo att: the residual add inside the GEMV
      k.rmsnorm(rec, { x: a.x, weight: L.ffnNorm.buffer, out: a.xn, n: d, count: T, eps: c.rmsEps });
      this.linear(rec, L.gate, a.xn, a.gate, T), this.linear(rec, L.up, a.xn, a.up, T);
      k.swiglu(rec, { g: a.gate, u: a.up, n: T * c.nFf });
      this.linear(rec, L.down, a.gate, a.x, T, /*accumulate=*/true);
    });
    k.rmsnorm(rec, { x: a.x, weight: this.outputNorm.buffer, out: a.xn, n: d, count: T, eps: c.rmsEps });
    this.linear(rec, this.output, a.xn, a.logits, T);
    if (greedy || !logits) k.argmax(rec, { x: a.logits, out: a.next, n: c.nVocab, count: T });
    await rec.submit();
    const out = logits ? new Float32Array(await k.read(a.logits, T * c.nVocab * 4)) : null;
    if (!greedy && logits) return out;
    const next = Array.from(new Uint32Array(await k.read(a.next, T * 4)));
    return logits ? { logits: out, tokens: next } : next;
  }
}
