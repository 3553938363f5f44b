// The WebGPU forward pass (model.mjs) against the CPU's logits in Node: every reference recording of
// tests/data/reference (NAME.json + NAME.logits.f32: the CPU logits that chose each greedy token, the
// ones realizar's CPU pass is tested against) checked by parity.mjs (the parity gate's rule).
//   node forward_parity.mjs TESTDATA_DIR CONTRACTS_DIR [--positions N] [--prefill-chunk N] [NAME ...]
//   (default: every recording, every recorded position, the prompt in one call; --positions: the first N
//   (the gate's min_positions is 8: SwiftShader takes seconds per decode step of the larger test models);
//   --prefill-chunk: the prompt in calls of N tokens)
// Exit status 0: every recording passes; 1: one fails (or an error); 77: skipped (no npm webgpu or no
// adapter: the message says which), for CTest's SKIP_RETURN_CODE. Dawn runs on the Vulkan driver of
// VK_ICD_FILENAMES when set, else TRUENO_WEBGPU_ICD, else Debian chromium's SwiftShader (as webgpu_tests).
import { existsSync } from 'node:fs';
import { open, readFile, readdir } from 'node:fs/promises';

import { checkRecording, gateNumbers } from './parity.mjs';

async function main() {
  const [dataDir, contractsDir, ...rest] = process.argv.slice(2);
  let positions = Infinity, prefillChunk = Infinity;
  for (;;) {
    if (rest[0] === '--positions') positions = Number(rest[1]), rest.splice(0, 2);
    else if (rest[0] === '--prefill-chunk') prefillChunk = Number(rest[1]), rest.splice(0, 2);
    else break;
  }
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
  for (const name of names.length ? names : all) {
    const ref = JSON.parse(await readFile(`${dataDir}/reference/${name}.json`, 'utf8'));
    const logits = new Float32Array((await readFile(`${dataDir}/reference/${ref.logits_file}`)).buffer.slice(0));
    const file = await open(`${dataDir}/models/${ref.model}`);
    const read = async (offset, length) => {
      const b = new Uint8Array(length);
      await file.read(b, 0, length, offset);
      return b;
    };
    const r = await checkRecording(opened.kernels, name, ref, logits, read, (await file.stat()).size, gate, positions, prefillChunk);
    await file.close();
    process.stdout.write(`${r.line}\n`);
    ok = r.ok && ok;
  }
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
