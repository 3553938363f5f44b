// The page's controls: load a model (gguf_image.mjs -> CpuEngine), choose the backend (WebGPU only when
// its parity gate passes against the CPU), generate with streaming text, tokens/s and a stop button.
import { planImage } from './gguf_image.mjs';
import { CpuEngine } from './cpu_engine.mjs';
import { GpuEngine, webgpuDevice } from './gpu_engine.mjs';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const MAX_CTX = 2048;  // the KV cache's positions at most (a model's training context may be far larger)
const state = { cpu: null, gpu: null, backend: 'cpu', why: '', stop: false, generated: 0 };

const showError = (e) => {
  $('error').textContent = e && e.message ? e.message : String(e);
  console.error(e);
};
const nextFrame = () => new Promise((r) => setTimeout(r, 0));  // lets the page draw and the stop button work
// While a model loads or generates, no other load may start (the engines are shared).
const lockLoading = (locked) => { $('files').disabled = $('bundled').disabled = $('backend').disabled = locked; };

async function chooseBackend(mode, nCtx, plan) {
  if (mode === 'cpu') return { backend: 'cpu', why: 'WebAssembly CPU chosen (backend = cpu)' };
  let dev;
  try {
    dev = await webgpuDevice();
  } catch (e) {
    return { backend: 'cpu', why: `WebAssembly CPU: no WebGPU device: ${e.message}` };
  }
  if (!dev.device) return { backend: 'cpu', why: `WebAssembly CPU: no WebGPU: ${dev.why}`, noAdapter: dev.why };
  let g;
  try {
    state.gpu = await GpuEngine.create(dev.device, plan, state.cpu, nCtx, { rollLogits: params.get('fault') === 'webgpu-logits' });
    g = await state.gpu.gate(state.cpu, state.cpu.tokenize('Once upon a time, there was').slice(0, 16));
  } catch (e) {
    g = { ok: false, line: `it cannot run this model: ${e.message}` };
  }
  if (g.ok) return { backend: 'webgpu', why: `WebGPU (${dev.name}): ${g.line}` };
  state.gpu?.destroy(), state.gpu = null;
  return { backend: 'cpu', why: `WebAssembly CPU: WebGPU (${dev.name}) not used: ${g.line}` };
}

async function load(files) {
  lockLoading(true);
  try {
    return await loadUnlocked(files);
  } finally {
    lockLoading(false);
    $('progress').hidden = true;
  }
}

async function loadUnlocked(files) {
  $('error').textContent = '', $('out').textContent = '', $('stats').textContent = '', $('backendLine').textContent = '';
  $('run').disabled = true;
  state.gpu?.destroy(), state.gpu = null;
  state.cpu?.close();
  const bar = $('progress');
  bar.hidden = false, bar.value = 0;
  const t0 = performance.now();
  const plan = await planImage(files);
  state.cpu ??= await CpuEngine.create();
  const arch = plan.metadata.get('general.architecture');
  const nCtx = Math.min(plan.metadata.get(`${arch}.context_length`) ?? MAX_CTX, MAX_CTX);
  await state.cpu.load(plan, nCtx, (done, total, name) => {
    bar.value = done / total;
    $('loadStatus').textContent = `loading ${plan.partNames.join(' + ')}: ${(done / 2 ** 20).toFixed(1)} / ${(total / 2 ** 20).toFixed(1)} MiB (${name})`;
  });
  $('loadStatus').textContent = `loaded ${plan.partNames.join(' + ')} (${(plan.size / 2 ** 20).toFixed(1)} MiB, ${plan.tensors.length} tensors) ` +
    `in ${((performance.now() - t0) / 1000).toFixed(2)} s; checking backends…`;
  const choice = await chooseBackend($('backend').value, nCtx, plan);
  state.backend = choice.backend, state.why = choice.why;
  $('loadStatus').textContent = `${plan.partNames.join(' + ')} loaded and backends checked in ${((performance.now() - t0) / 1000).toFixed(2)} s: ${state.cpu.describe()}`;
  $('backendLine').textContent = `backend: ${choice.why}`;
  $('run').disabled = false;
  return choice;
}

// Generates from the prompt; returns { text, tokens (count), ids, backend, tokensPerSecond, stopped }.
async function generate() {
  const { cpu, gpu } = state, onGpu = state.backend === 'webgpu';
  state.stop = false, state.generated = 0;
  lockLoading(true);
  $('run').disabled = true, $('stop').disabled = false, $('error').textContent = '';
  try {
    const n = Number($('n').value), prompt = $('prompt').value;
    const threads = cpu.setThreads(Number($('threads').value) || Math.min(navigator.hardwareConcurrency || 1, 8));
    cpu.reset(Number($('temp').value), Number($('seed').value));
    gpu?.reset();
    const ids = cpu.tokenize(prompt);
    if (ids.length + 1 > cpu.nCtx) throw new Error(`the prompt (${ids.length} tokens) leaves no room in the context of ${cpu.nCtx}`);
    // Temperature 0 on WebGPU: the argmax on the GPU, 4 bytes a token (GpuEngine.forwardGreedy); otherwise
    // realizar's sampler on the logits read back.
    const greedyOnGpu = onGpu && Number($('temp').value) === 0;
    const t0 = performance.now();
    let logits = null, gpuNext = -1;
    if (greedyOnGpu) gpuNext = await gpu.forwardGreedy(ids), cpu.noteTokens(ids);
    else if (onGpu) logits = await gpu.forward(ids), cpu.noteTokens(ids);
    else cpu.forward(ids);
    const tPrompt = performance.now() - t0, t1 = performance.now();
    let text = '', generated = 0;
    const out = [];
    $('out').textContent = prompt;
    const stats = () => {
      const s = (performance.now() - t1) / 1000;
      $('stats').textContent = `${state.backend === 'webgpu' ? `WebGPU${greedyOnGpu ? ', greedy on the GPU' : ''}` : `WebAssembly CPU, ${threads} threads`} | prompt ${ids.length} tokens in ${tPrompt.toFixed(0)} ms | ` +
        `${generated} tokens, ${(generated / Math.max(s, 1e-9)).toFixed(1)} tokens/s`;
      return generated / Math.max(s, 1e-9);
    };
    while (generated < n && !state.stop) {
      const next = greedyOnGpu ? gpuNext : cpu.sample(logits);
      if (cpu.isEnd(next)) break;
      ++generated, out.push(next), state.generated = generated;
      const piece = cpu.piece(next);
      text += piece, $('out').textContent += piece;
      if (generated % 4 === 0) stats();
      if (generated >= n || ids.length + generated >= cpu.nCtx) break;
      if (greedyOnGpu) gpuNext = await gpu.forwardGreedy([next]), cpu.noteTokens([next]);
      else if (onGpu) logits = await gpu.forward([next]), cpu.noteTokens([next]);
      else cpu.forward([next]);
      await nextFrame();
    }
    const tail = cpu.flush();
    text += tail, $('out').textContent += tail;
    return { text, tokens: generated, ids: out, backend: state.backend, greedyOnGpu, tokensPerSecond: stats(), stopped: state.stop };
  } finally {
    lockLoading(false);
    $('run').disabled = false, $('stop').disabled = true;
  }
}

async function bundledFile(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new File([await r.blob()], url.split('/').pop());
}

$('files').addEventListener('change', () => load([...$('files').files]).catch(showError));
$('bundled').addEventListener('click', async () => load([await bundledFile('models/stories260K.gguf')]).catch(showError));
$('run').addEventListener('click', () => generate().catch(showError));
$('stop').addEventListener('click', () => { state.stop = true; });

// Tests (web/page_test.mjs): load, generate once, report one console line. model=A,B|C: each set but the
// last is only loaded (its error, if any, goes into the result's `loads`: the bad-file checks); the last
// set (parts of one model, comma-separated) is loaded and generates.
async function autorun() {
  const say = (r) => console.log(`RESULT ${encodeURIComponent(JSON.stringify(r))}`);  // one line, no quotes to escape
  try {
    for (const [key, id] of [['backend', 'backend'], ['prompt', 'prompt'], ['n', 'n'], ['temp', 'temp'], ['seed', 'seed'], ['threads', 'threads']]) if (params.has(key)) $(id).value = params.get(key);
    const sets = (params.get('model') ?? 'models/stories260K.gguf').split('|');
    const loads = [];
    for (const set of sets.slice(0, -1)) {
      try {
        await load(await Promise.all(set.split(',').map(bundledFile)));
        loads.push({ model: set, error: null });
      } catch (e) {
        showError(e);
        loads.push({ model: set, error: e.message });
      }
    }
    const choice = await load(await Promise.all(sets.at(-1).split(',').map(bundledFile)));
    if (params.get('backend') === 'webgpu' && choice.noAdapter) return say({ status: 'SKIP', why: choice.why });
    const r = await generate();
    // stopAfter=K: generate again and press the stop button once K tokens are out.
    let stopRun = null;
    if (params.has('stopAfter')) {
      const k = Number(params.get('stopAfter'));
      const presser = setInterval(() => { if ($('out').textContent.length > 0 && state.generated >= k) $('stop').click(); }, 0);
      stopRun = await generate().finally(() => clearInterval(presser));
    }
    say({ status: 'DONE', why: state.why, loads, stopRun, ...r });
  } catch (e) {
    showError(e);
    say({ status: 'ERROR', why: e && e.message ? e.message : String(e) });
  }
}
if (params.get('autorun') === '1') autorun();
