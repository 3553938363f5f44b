// Tokens per second of the WebGPU forward pass (model.mjs) in Node on Dawn: a prompt of p tokens in one
// call (prefill), then n greedy steps (argmax on the GPU, 4 bytes read back per token), r repetitions.
// On these machines Dawn runs on SwiftShader (VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json),
// so the numbers are a sanity line, not a measure of WebGPU (docs/PERFORMANCE.md, "WebGPU").
//   node bench.mjs MODEL.gguf [-p 32] [-n 16] [-r 2]
import { open } from 'node:fs/promises';

import { readGguf } from './gguf.mjs';
import { WebGpuModel } from './model.mjs';
import { describe, openKernels } from './node_device.mjs';

const args = process.argv.slice(2);
const opt = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const path = args[0], p = opt('-p', 32), n = opt('-n', 16), reps = opt('-r', 2);
if (!path) {
  process.stderr.write('usage: node bench.mjs MODEL.gguf [-p 32] [-n 16] [-r 2]\n');
  process.exit(2);
}
const { adapter, device, kernels } = await openKernels();
const file = await open(path);
const read = async (offset, length) => {
  const b = new Uint8Array(length);
  await file.read(b, 0, length, offset);
  return b;
};
const model = await WebGpuModel.load(kernels, await readGguf(read, (await file.stat()).size), read,
  { nCtx: Math.ceil((p + n) / 64) * 64, maxTokens: p });
await file.close();
const prompt = Array.from({ length: p }, (_, i) => 1 + (i * 7) % (model.c.nVocab - 1));
await model.forward(prompt, 0, { logits: false });  // warm-up: first use of every pipeline
let pp = 0, tg = 0;
for (let r = 0; r < reps; ++r) {
  const t0 = performance.now();
  let next = (await model.forward(prompt, 0, { logits: false }))[p - 1];
  const t1 = performance.now();
  for (let i = 0; i < n; ++i) next = (await model.forward([next], p + i, { logits: false }))[0];
  const t2 = performance.now();
  pp += (p * 1000) / (t1 - t0) / reps, tg += (n * 1000) / (t2 - t1) / reps;
}
process.stdout.write(`${path.split('/').pop()} (${model.c.arch}, ${describe(adapter)}): pp${p} ${pp.toFixed(1)} tok/s, tg${n} ${tg.toFixed(2)} tok/s ` +
                     `(mean of ${reps})\n`);
model.destroy();
device.destroy();
