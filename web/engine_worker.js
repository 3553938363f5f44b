// The model runs here, in a dedicated worker, so the page stays responsive during a large model's step
// (docs/BROWSER.md, "The page"). A classic worker: emscripten 3.1.6's build is a classic script
// (importScripts), and its pthread workers are started from here; the engines are ES modules, imported
// dynamically. The page (app.mjs) sends { id, type: 'load' | 'generate' | 'stop', ... }; the worker answers
// { id, value } or { id, error } and streams { id, event } while it works. 'stop' is taken between tokens.
importScripts('realizar_web.js');

const modules = Promise.all([import('./gguf_image.mjs'), import('./cpu_engine.mjs'), import('./gpu_engine.mjs')]).then(
  ([image, cpu, gpu]) => ({ planImage: image.planImage, CpuEngine: cpu.CpuEngine, GpuEngine: gpu.GpuEngine, webgpuDevice: gpu.webgpuDevice }));
const MAX_CTX = 2048;  // the KV cache's positions at most (a model's training context may be far larger)
const state = { cpu: null, gpu: null, backend: 'cpu', why: '', stop: false };
const yieldToEvents = () => new Promise((r) => setTimeout(r, 0));  // lets a 'stop' message in

async function chooseBackend(m, mode, nCtx, plan, fault) {
  if (mode === 'cpu') return { backend: 'cpu', why: 'WebAssembly CPU chosen (backend = cpu)' };
  let dev;
  try {
    dev = await m.webgpuDevice();
  } catch (e) {
    return { backend: 'cpu', why: `WebAssembly CPU: no WebGPU device: ${e.message}` };
  }
  if (!dev.device) return { backend: 'cpu', why: `WebAssembly CPU: no WebGPU: ${dev.why}`, noAdapter: dev.why };
  let g;
  try {
    state.gpu = await m.GpuEngine.create(dev.device, plan, state.cpu, nCtx, { rollLogits: fault === 'webgpu-logits' });
    g = await state.gpu.gate(state.cpu, state.cpu.tokenize('Once upon a time, there was').slice(0, 16));
  } catch (e) {
    g = { ok: false, line: `it cannot run this model: ${e.message}` };
  }
  if (g.ok) return { backend: 'webgpu', why: `WebGPU (${dev.name}): ${g.line}` };
  state.gpu?.destroy(), state.gpu = null;
  return { backend: 'cpu', why: `WebAssembly CPU: WebGPU (${dev.name}) not used: ${g.line}` };
}

// Loads files (File objects: one model, or its split parts) and chooses the backend.
async function load({ files, backend, fault }, emit) {
  const m = await modules;
  state.gpu?.destroy(), state.gpu = null;
  state.cpu?.close();
  const t0 = performance.now();
  const plan = await m.planImage(files);
  state.cpu ??= await m.CpuEngine.create();
  const arch = plan.metadata.get('general.architecture');
  const nCtx = Math.min(plan.metadata.get(`${arch}.context_length`) ?? MAX_CTX, MAX_CTX);
  await state.cpu.load(plan, nCtx, (done, total, name) =>
    emit({ progress: done / total, status: `loading ${plan.partNames.join(' + ')}: ${(done / 2 ** 20).toFixed(1)} / ${(total / 2 ** 20).toFixed(1)} MiB (${name})` }));
  emit({ status: `loaded ${plan.partNames.join(' + ')} (${(plan.size / 2 ** 20).toFixed(1)} MiB, ${plan.tensors.length} tensors) ` +
    `in ${((performance.now() - t0) / 1000).toFixed(2)} s; checking backends…` });
  const choice = await chooseBackend(m, backend, nCtx, plan, fault);
  state.backend = choice.backend, state.why = choice.why;
  return { ...choice, status: `${plan.partNames.join(' + ')} loaded and backends checked in ${((performance.now() - t0) / 1000).toFixed(2)} s: ${state.cpu.describe()}` };
}

// Generates from the prompt, streaming { piece, generated, stats }; returns { text, tokens (count), ids,
// backend, greedyOnGpu, tokensPerSecond, stopped }.
async function generate({ prompt, n, temp, seed, threads: asked }, emit) {
  const { cpu, gpu } = state, onGpu = state.backend === 'webgpu';
  if (!cpu || !cpu.e) throw new Error('no model is loaded');
  state.stop = false;
  const threads = cpu.setThreads(asked || Math.min(navigator.hardwareConcurrency || 1, 8));
  cpu.reset(temp, seed);
  gpu?.reset();
  const ids = cpu.tokenize(prompt);
  if (ids.length + 1 > cpu.nCtx) throw new Error(`the prompt (${ids.length} tokens) leaves no room in the context of ${cpu.nCtx}`);
  // Temperature 0 on WebGPU: the argmax on the GPU, 4 bytes a token (GpuEngine.forwardGreedy); otherwise
  // realizar's sampler on the logits read back.
  const greedyOnGpu = onGpu && temp === 0;
  const t0 = performance.now();
  let logits = null, gpuNext = -1;
  if (greedyOnGpu) gpuNext = await gpu.forwardGreedy(ids), cpu.noteTokens(ids);
  else if (onGpu) logits = await gpu.forward(ids), cpu.noteTokens(ids);
  else cpu.forward(ids);
  const tPrompt = performance.now() - t0, t1 = performance.now();
  let text = '', generated = 0;
  const out = [];
  const rate = () => generated / Math.max((performance.now() - t1) / 1000, 1e-9);
  const stats = () => `${onGpu ? `WebGPU${greedyOnGpu ? ', greedy on the GPU' : ''}` : `WebAssembly CPU, ${threads} threads`} | prompt ${ids.length} tokens in ` +
    `${tPrompt.toFixed(0)} ms | ${generated} tokens, ${rate().toFixed(1)} tokens/s`;
  while (generated < n && !state.stop) {
    const next = greedyOnGpu ? gpuNext : cpu.sample(logits);
    if (cpu.isEnd(next)) break;
    ++generated, out.push(next);
    const piece = cpu.piece(next);
    text += piece;
    emit({ piece, generated, stats: generated % 4 === 0 ? stats() : undefined });
    if (generated >= n || ids.length + generated >= cpu.nCtx) break;
    if (greedyOnGpu) gpuNext = await gpu.forwardGreedy([next]), cpu.noteTokens([next]);
    else if (onGpu) logits = await gpu.forward([next]), cpu.noteTokens([next]);
    else cpu.forward([next]);
    await yieldToEvents();
  }
  const tail = cpu.flush();
  text += tail;
  emit({ piece: tail, generated, stats: stats() });
  return { text, tokens: generated, ids: out, backend: state.backend, greedyOnGpu, tokensPerSecond: rate(), stopped: state.stop, why: state.why,
    inWorker: typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope };
}

self.onmessage = async ({ data }) => {
  if (data.type === 'stop') {
    state.stop = true;
    return;
  }
  const emit = (event) => self.postMessage({ id: data.id, event });
  try {
    const value = await (data.type === 'load' ? load(data, emit) : generate(data, emit));
    self.postMessage({ id: data.id, value });
  } catch (e) {
    console.error(e);
    self.postMessage({ id: data.id, error: e && e.message ? e.message : String(e) });
  }
};
