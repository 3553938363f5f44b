// realizar's WebAssembly build (realizar_web.cpp's C API), in the page's engine worker (engine_worker.js): the
// model image copied into wasm memory, tokenizer, CPU forward and sampler. createRealizar comes from
// realizar_web.js (a classic script, loaded by the worker).
import { copyTensors } from './gguf_image.mjs';

export class CpuEngine {
  static async create() {
    if (typeof createRealizar !== 'function') throw new Error('realizar_web.js did not load (is the page served from the build folder?)');
    if (!self.crossOriginIsolated) throw new Error('the page is not cross-origin isolated: serve it with the COOP/COEP headers (web/serve.mjs); WebAssembly threads need SharedArrayBuffer');
    // In a worker, emscripten cannot find its own script for its pthread workers (no document.currentScript).
    return new CpuEngine(await createRealizar({ mainScriptUrlOrBlob: new URL('realizar_web.js', self.location.href).href }));
  }

  constructor(m) {
    this.m = m;
    this.e = 0;
  }

  u8() { return new Uint8Array(this.m.memoryBuffer()); }
  error(what) { return new Error(`${what}: ${this.m.UTF8ToString(this.m._rz_error())}`); }
  text(ptr) { return this.m.UTF8ToString(ptr); }
  // rz_piece/rz_flush's bytes as text; invalid UTF-8 (a model's stray byte tokens) becomes U+FFFD.
  bytesText(ptr) {
    const p = ptr >>> 0;
    return new TextDecoder().decode(this.u8().slice(p, p + this.m._rz_text_size(this.e)));
  }

  // Copies the image planned by gguf_image.mjs into wasm memory, tensor by tensor, and opens it.
  async load(plan, nCtx, progress) {
    const img = this.m._rz_image_alloc(plan.size) >>> 0;  // >>> 0: pointers above 2 GiB
    if (!img) throw this.error('loading the model');
    try {
      await copyTensors(plan, (offset, bytes) => this.u8().set(bytes, img + offset), progress);
    } catch (e) {
      this.m._rz_image_free(img);
      throw e;
    }
    this.image = img;
    this.e = this.m._rz_open(img, plan.size, nCtx);  // owns the image from here, frees it on failure
    if (!this.e) throw this.error('opening the model');
    this.nVocab = this.m._rz_n_vocab(this.e);
    this.nCtx = this.m._rz_n_ctx(this.e);
    this.tokens = this.m._malloc(4 * this.nCtx) >>> 0;
    this.logitsIn = this.m._malloc(4 * this.nVocab) >>> 0;
  }

  // Bytes of the image (the WebGPU model reads its tensors from here).
  read(offset, length) { return this.u8().slice(this.image + offset, this.image + offset + length); }
  setThreads(n) { return this.m._rz_set_threads(n); }
  describe() { return this.text(this.m._rz_describe(this.e)); }

  tokenize(text) {
    const n = this.m.lengthBytesUTF8(text) + 1, p = this.m._malloc(n);
    this.m.stringToUTF8(text, p, n);
    const count = this.m._rz_tokenize(this.e, p, this.tokens, this.nCtx);
    this.m._free(p);
    if (count < 0) throw this.error('tokenizing the prompt');
    return Array.from(new Int32Array(this.m.memoryBuffer(), this.tokens, count));
  }

  reset(temperature, seed) {
    if (this.m._rz_reset(this.e, temperature, seed) < 0) throw this.error('sampler');
  }

  putTokens(ids) { new Int32Array(this.m.memoryBuffer(), this.tokens, ids.length).set(ids); }

  // The CPU forward of ids; the last token's logits as a copy.
  forward(ids) {
    this.putTokens(ids);
    if (this.m._rz_forward(this.e, this.tokens, ids.length) < 0) throw this.error('cpu forward');
  }
  logits() { return new Float32Array(this.m.memoryBuffer(), this.m._rz_logits(this.e) >>> 0, this.nVocab).slice(); }

  // ids run on another backend: the sampler's history only.
  noteTokens(ids) {
    this.putTokens(ids);
    this.m._rz_note_tokens(this.e, this.tokens, ids.length);
  }

  // The next token from the CPU's logits, or from logits given (WebGPU's).
  sample(logits = null) {
    if (logits) new Float32Array(this.m.memoryBuffer(), this.logitsIn, this.nVocab).set(logits);
    const t = this.m._rz_sample(this.e, logits ? this.logitsIn : 0);
    if (t < 0) throw this.error('sampling');
    return t;
  }
  isEnd(token) { return this.m._rz_is_end(this.e, token) !== 0; }
  piece(token) { return this.bytesText(this.m._rz_piece(this.e, token)); }
  flush() { return this.bytesText(this.m._rz_flush(this.e)); }

  close() {
    if (!this.e) return;
    this.m._free(this.tokens), this.m._free(this.logitsIn), this.m._rz_close(this.e);
    this.e = 0;
  }
}
