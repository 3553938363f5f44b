// The parity check of the WebGPU forward pass (model.mjs) against recorded CPU logits, shared by Node
// (forward_parity.mjs) and the browser (browser_check.html): the prompt in one call (prefill), then each
// recorded token fed back one at a time (decode); each step's logits compared with the recording by the
// parity gate's rule (contracts/gpu-parity.yaml: every position's cosine >= min_cosine, argmaxes agreeing
// on >= min_argmax_agreement of them, all finite). A page chooses WebGPU only when this passes.
// No Node or browser API here: the caller gives the GGUF reader and the recording.

import { readGguf } from './gguf.mjs';
import { WebGpuModel } from './model.mjs';

// The gate's numbers from the text of contracts/gpu-parity.yaml.
export function gateNumbers(yaml) {
  const num = (key) => {
    const m = yaml.match(new RegExp(`^\\s+${key}:\\s*([0-9.eE+-]+)`, 'm'));
    if (!m) throw new Error(`contracts/gpu-parity.yaml: no gate key '${key}'`);
    return Number(m[1]);
  };
  return { minCosine: num('min_cosine'), minArgmax: num('min_argmax_agreement'), minPositions: num('min_positions') };
}

export function argmax(x) {
  let best = 0;
  for (let i = 1; i < x.length; ++i) if (x[i] > x[best]) best = i;
  return best;
}

// One position's logits against the reference's: cosine (0 for an all-zero row), max |d|, finite, same argmax.
export function compare(got, want) {
  let dot = 0, na = 0, nb = 0, maxAbs = 0, finite = true;
  for (let i = 0; i < want.length; ++i) {
    if (!Number.isFinite(got[i])) finite = false;
    dot += got[i] * want[i], na += got[i] * got[i], nb += want[i] * want[i];
    maxAbs = Math.max(maxAbs, Math.abs(got[i] - want[i]));
  }
  return { cosine: na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0, maxAbs, finite, same: argmax(got) === argmax(want) };
}

// ref: the recording's JSON; logits: its Float32Array; read(offset, length) -> Promise<Uint8Array> of
// the model file of fileSize bytes. { ok, line } (line: the verdict in one line).
// positions: compare the first this many; prefillChunk: run the prompt in calls of at most this many tokens
// (a long prompt's way through the attention scratch), else in one.
export async function checkRecording(kernels, name, ref, logits, read, fileSize, gate, positions = Infinity, prefillChunk = Infinity) {
  const t0 = performance.now();
  const gguf = await readGguf(read, fileSize);
  const prompt = ref.prompt_tokens, gen = ref.generated_tokens.slice(0, positions), V = ref.n_vocab;
  const chunk = Math.min(prefillChunk, prompt.length);
  const model = await WebGpuModel.load(kernels, gguf, read, { nCtx: Math.ceil((prompt.length + gen.length) / 64) * 64, maxTokens: chunk });
  const t1 = performance.now();
  // greedy: the GPU's argmax of each row too, which must pick what the logits read back pick.
  let step;
  for (let p = 0; p < prompt.length; p += chunk) step = await model.forward(prompt.slice(p, p + chunk), p, { greedy: true });
  const rows = step.tokens.length;
  let last = step.logits.subarray((rows - 1) * V, rows * V), next = step.tokens[rows - 1];
  let minCos = 1, maxAbs = 0, agree = 0, finite = true, firstBad = -1, argmaxDiffers = 0;
  for (let i = 0; i < gen.length; ++i) {
    if (next !== argmax(last)) ++argmaxDiffers;
    const r = compare(last, logits.subarray(i * V, (i + 1) * V));
    if (r.cosine < minCos) minCos = r.cosine;
    maxAbs = Math.max(maxAbs, r.maxAbs);
    agree += r.same ? 1 : 0;
    finite &&= r.finite;
    if (firstBad < 0 && (r.cosine < gate.minCosine || !r.finite)) firstBad = i;
    if (i + 1 < gen.length) {
      step = await model.forward([gen[i]], prompt.length + i, { greedy: true });
      last = step.logits, next = step.tokens[0];
    }
  }
  const t2 = performance.now();
  model.destroy();
  const ok = firstBad < 0 && finite && agree >= gate.minArgmax * gen.length && argmaxDiffers === 0;
  const line = `${ok ? 'PASS' : 'FAIL'} ${name} (${ref.model}, ${model.c.arch}, ${gen.length} positions): min cosine ${minCos.toFixed(6)}, ` +
    `max |d| ${maxAbs.toExponential(2)}, argmax ${agree}/${gen.length}` + (firstBad >= 0 ? `, first position below ${gate.minCosine}: ${firstBad}` : '') +
    (argmaxDiffers ? `, the GPU argmax differs from the logits' on ${argmaxDiffers} positions` : '') +
    `; load ${(t1 - t0).toFixed(0)} ms, prefill ${prompt.length}${chunk < prompt.length ? ` in calls of ${chunk}` : ''} + decode ${gen.length - 1} tokens ${(t2 - t1).toFixed(0)} ms`;
  return { ok, line };
}
