// The page's controls: load a model, choose the backend (WebGPU only when its parity gate passes against the
// CPU), generate with streaming text, tokens/s and a stop button. The model itself runs in a worker
// (engine_worker.js: the engines, the gate, the generation loop), so a large model's step never freezes
// the page; this module only talks to it and draws.
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const state = { busy: false, generated: 0 };

const showError = (e) => {
  $('error').textContent = e && e.message ? e.message : String(e);
  console.error(e);
};
// While a model loads or generates, no other load may start (the worker's engines are shared).
const lockLoading = (locked) => { $('files').disabled = $('bundled').disabled = $('backend').disabled = locked; };

const worker = new Worker('engine_worker.js');
const pending = new Map();
let nextId = 1;
worker.onmessage = ({ data }) => {
  const p = pending.get(data.id);
  if (!p) return;
  if (data.event) return p.onEvent(data.event);
  pending.delete(data.id);
  if ('error' in data) p.reject(new Error(data.error));
  else p.resolve(data.value);
};
worker.onerror = (e) => {
  const err = new Error(`the engine worker failed: ${e.message || 'it could not start (is the page served from the build folder?)'}`);
  for (const p of pending.values()) p.reject(err);
  pending.clear();
  showError(err);
};
// One request to the worker: resolves with its value, onEvent sees what it streams meanwhile.
function call(type, payload, onEvent = () => {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onEvent });
    worker.postMessage({ id, type, ...payload });
  });
}

async function load(files) {
  lockLoading(true);
  $('error').textContent = '', $('out').textContent = '', $('stats').textContent = '', $('backendLine').textContent = '';
  $('run').disabled = true;
  const bar = $('progress');
  bar.hidden = false, bar.value = 0;
  try {
    const choice = await call('load', { files, backend: $('backend').value, fault: params.get('fault') }, (ev) => {
      if (ev.progress !== undefined) bar.value = ev.progress;
      if (ev.status) $('loadStatus').textContent = ev.status;
    });
    $('loadStatus').textContent = choice.status;
    $('backendLine').textContent = `backend: ${choice.why}`;
    $('run').disabled = false;
    return choice;
  } finally {
    lockLoading(false);
    bar.hidden = true;
  }
}

// Generates from the prompt; returns the worker's { text, tokens, ids, backend, greedyOnGpu, tokensPerSecond, stopped, why }.
async function generate() {
  state.generated = 0;
  lockLoading(true);
  $('run').disabled = true, $('stop').disabled = false, $('error').textContent = '';
  $('out').textContent = $('prompt').value;
  try {
    return await call('generate', {
      prompt: $('prompt').value, n: Number($('n').value), temp: Number($('temp').value), seed: Number($('seed').value),
      threads: Number($('threads').value) || 0,
    }, (ev) => {
      $('out').textContent += ev.piece;
      state.generated = ev.generated;
      if (ev.stats) $('stats').textContent = ev.stats;
    });
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
$('stop').addEventListener('click', () => worker.postMessage({ type: 'stop' }));

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
      const presser = setInterval(() => { if (state.generated >= k) $('stop').click(); }, 0);
      stopRun = await generate().finally(() => clearInterval(presser));
    }
    say({ status: 'DONE', loads, stopRun, ...r });
  } catch (e) {
    showError(e);
    say({ status: 'ERROR', why: e && e.message ? e.message : String(e) });
  }
}
if (params.get('autorun') === '1') autorun();
