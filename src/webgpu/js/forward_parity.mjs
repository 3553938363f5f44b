// The WebGPU forward pass (model.mjs) against the CPU's logits: for each reference recording of
// tests/data/reference (NAME.json + NAME.logits.f32: the CPU logits that chose each greedy token, the
// ones realizar's CPU pass is tested against), the prompt in one call (prefill), then each recorded token
// fed back one at a time (decode); each step's logits compared with the recording by the parity gate's
// rule (contracts/gpu-parity.yaml: every position's cosine >= min_cosine, argmaxes agreeing on >=
// min_argmax_agreement of them, all finite). The idea of the page's parity gate: WebGPU serves a model
// only when this passes.
//   node forward_parity.mjs TESTDATA_DIR CONTRACTS_DIR [--positions N] [NAME ...]   (default: every
//   recording, every recorded position; --positions: the first N (the gate's min_positions is 8): on
//   SwiftShader each decode step of even these tiny models takes a second or more)
// Exit status 0: every recording passes; 1: one fails (or an error); 77: skipped (no npm webgpu or no
// adapter: the message says which), for CTest's SKIP_RETURN_CODE. Dawn runs on the Vulkan driver of
// VK_ICD_FILENAMES when set, else TRUENO_WEBGPU_ICD, else Debian chromium's SwiftShader (as webgpu_tests).
import { existsSync } from 'node:fs';
import { open, readFile, readdir } from 'node:fs/promises';

import { readGguf } from './gguf.mjs';
import { WebGpuModel } from './model.mjs';

function gateNumbers(yaml) {
  const num = (key) => {
    const m = yaml.match(new RegExp(`^\\s+${key}:\\s*([0-9.eE+-]+)`, 'm'));
    if (!m) throw new Error(`contracts/gpu-parity.yaml: no gate key '${key}'`);
    return Number(m[1]);
  };
  return { minCosine: num('min_cosine'), minArgmax: num('min_argmax_agreement') };
}

function argmax(x) {
  let best = 0;
  for (let i = 1; i < x.length; ++i) if (x[i] > x[best]) best = i;
  return best;
}

function compare(got, want) {
  let dot = 0, na = 0, nb = 0, maxAbs = 0, finite = true;
  for (let i = 0; i < want.length; ++i) {
    if (!Number.isFinite(got[i])) finite = false;
    dot += got[i] * want[i], na += got[i] * got[i], nb += want[i] * want[i];
    maxAbs = Math.max(maxAbs, Math.abs(got[i] - want[i]));
  }
  return { cosine: na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0, maxAbs, finite, same: argmax(got) === argmax(want) };
}

async function check(kernels, dataDir, name, gate, positions) {
  const ref = JSON.parse(await readFile(`${dataDir}/reference/${name}.json`, 'utf8'));
  const logits = new Float32Array((await readFile(`${dataDir}/reference/${ref.logits_file}`)).buffer.slice(0));
  const file = await open(`${dataDir}/models/${ref.model}`);
  const read = async (offset, length) => {
    const b = new Uint8Array(length);
    await file.read(b, 0, length, offset);
    return b;
  };
  const t0 = performance.now();
  const gguf = await readGguf(read, (await file.stat()).size);
  const prompt = ref.prompt_tokens, gen = ref.generated_tokens.slice(0, positions), V = ref.n_vocab;
  const model = await WebGpuModel.load(kernels, gguf, read, { nCtx: Math.ceil((prompt.length + gen.length) / 64) * 64, maxTokens: prompt.length });
  await file.close();
  const t1 = performance.now();
  let step = await model.forward(prompt, 0);
  let last = step.subarray((prompt.length - 1) * V, prompt.length * V);
  let minCos = 1, maxAbs = 0, agree = 0, finite = true, firstBad = -1;
  for (let i = 0; i < gen.length; ++i) {
    const r = compare(last, logits.subarray(i * V, (i + 1) * V));
    if (r.cosine < minCos) minCos = r.cosine;
    maxAbs = Math.max(maxAbs, r.maxAbs);
    agree += r.same ? 1 : 0;
    finite &&= r.finite;
    if (firstBad < 0 && (r.cosine < gate.minCosine || !r.finite)) firstBad = i;
    if (i + 1 < gen.length) last = await model.forward([gen[i]], prompt.length + i);
  }
  const t2 = performance.now();
  const ok = firstBad < 0 && finite && agree >= gate.minArgmax * gen.length;
  process.stdout.write(`${ok ? 'PASS' : 'FAIL'} ${name} (${ref.model}, ${model.c.arch}, ${gen.length} positions): min cosine ${minCos.toFixed(6)}, ` +
    `max |d| ${maxAbs.toExponential(2)}, argmax ${agree}/${gen.length}` + (firstBad >= 0 ? `, first position below ${gate.minCosine}: ${firstBad}` : '') +
    `; load ${(t1 - t0).toFixed(0)} ms, prefill ${prompt.length} + decode ${gen.length - 1} tokens ${(t2 - t1).toFixed(0)} ms\n`);
  return ok;
}

async function main() {
  const [dataDir, contractsDir, ...rest] = process.argv.slice(2);
  let positions = Infinity;
  if (rest[0] === '--positions') positions = Number(rest[1]), rest.splice(0, 2);
  const names = rest;
  if (!dataDir || !contractsDir) {
    process.stderr.write('usage: node forward_parity.mjs TESTDATA_DIR CONTRACTS_DIR [NAME ...]\n');
    process.exit(2);
  }
  if (!process.env.VK_ICD_FILENAMES) {
    const icd = process.env.TRUENO_WEBGPU_ICD || '/usr/lib/chromium/vk_swiftshader_icd.json';
    if (!existsSync(icd)) {
      process.stdout.write(`skipped: no SwiftShader Vulkan driver at ${icd} (Debian: chromium; or set TRUENO_WEBGPU_ICD)\n`);
      process.exit(77);
    }
    process.env.VK_ICD_FILENAMES = icd;  // before dawn.node loads (the dynamic import below)
  }
  let openKernels;
  try {
    ({ openKernels } = await import('./node_device.mjs'));
  } catch (e) {
    process.stdout.write(`skipped: npm webgpu is not installed in src/webgpu/js (bash scripts/setup.sh --deps): ${e.message}\n`);
    process.exit(77);
  }
  let opened;
  try {
    opened = await openKernels();
  } catch (e) {
    if (!/no WebGPU adapter/.test(e.message)) throw e;
    process.stdout.write(`skipped: ${e.message}\n`);
    process.exit(77);
  }
  const gate = gateNumbers(await readFile(`${contractsDir}/gpu-parity.yaml`, 'utf8'));
  const all = (await readdir(`${dataDir}/reference`)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  let ok = true;
  for (const name of names.length ? names : all) ok = (await check(opened.kernels, dataDir, name, gate, positions)) && ok;
  if (opened.errors.length) {
    process.stdout.write(`WebGPU errors: ${opened.errors.join('; ')}\n`);
    ok = false;
  }
  opened.device.destroy();
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  process.stderr.write(`forward_parity: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
