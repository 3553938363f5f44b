// The WebGPU contract tests' harness (src/webgpu/webgpu_test.cpp writes the job, checks the outputs
// against trueno's CPU kernels by contracts/gpu/webgpu.yaml): runs a list of kernel calls through the
// glue (trueno_webgpu.mjs) on Dawn and writes the buffers named as outputs.
//   node run_ops.mjs JOB.json      # {"max_binding_bytes": N, "gemv_threads_per_row": N (both optional), "cases": [CASE, ...]}
// CASE: {"op": "gemv", "buffers": {NAME: {"file": PATH} | {"bytes": N, "fill": U32}}, "args": {...},
//        "out": {NAME: PATH}, "scratch": [n_ctx, heads, head_dim, rows] (attention only)}
// In args a string "@NAME" is the buffer NAME; everything else goes to the op as given. The cases run in
// order, one submission each. Exit status 0: done; 1: a WebGPU or contract error (the message names it).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

import { describe, openKernels } from './node_device.mjs';

function fail(why) {
  process.stderr.write(`run_ops: ${why}\n`);
  process.exit(1);
}

async function runCase(kernels, c) {
  const buffers = {};
  for (const [name, spec] of Object.entries(c.buffers ?? {})) {
    if (spec.file !== undefined) {
      const bytes = readFileSync(spec.file);
      buffers[name] = { buffer: kernels.buffer(bytes.length, bytes), bytes: bytes.length };
    } else {
      const words = new Uint32Array(Math.ceil(spec.bytes / 4)).fill(spec.fill ?? 0);
      buffers[name] = { buffer: kernels.buffer(spec.bytes, words), bytes: spec.bytes };
    }
  }
  const args = {};
  for (const [key, value] of Object.entries(c.args ?? {})) {
    if (typeof value === 'string' && value.startsWith('@')) {
      if (!buffers[value.slice(1)]) throw new Error(`case ${c.op}: no buffer '${value.slice(1)}'`);
      args[key] = buffers[value.slice(1)].buffer;
    } else {
      args[key] = value;
    }
  }
  if (c.scratch) args.scratch = kernels.attentionScratch(...c.scratch);
  const rec = kernels.recorder();
  if (typeof kernels[c.op] !== 'function') throw new Error(`no op '${c.op}' in the glue`);
  kernels[c.op](rec, args);
  await rec.submit();
  for (const [name, path] of Object.entries(c.out ?? {})) {
    const b = buffers[name];
    if (!b) throw new Error(`case ${c.op}: no output buffer '${name}'`);
    writeFileSync(`${path}.tmp`, new Uint8Array(await kernels.read(b.buffer, b.bytes)));
    renameSync(`${path}.tmp`, path);  // a failed run leaves no half-written output
  }
  for (const b of Object.values(buffers)) b.buffer.destroy();
  return rec.dispatches;
}

async function main() {
  if (process.argv.length !== 3) fail('usage: node run_ops.mjs JOB.json');
  const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const { adapter, device, kernels, errors } = await openKernels({ maxBindingBytes: job.max_binding_bytes, gemvThreadsPerRow: job.gemv_threads_per_row });
  const t0 = performance.now();
  let dispatches = 0;
  for (const c of job.cases) {
    device.pushErrorScope('validation');
    try {
      dispatches += await runCase(kernels, c);
    } catch (e) {
      fail(`${c.op}: ${e.message}`);
    }
    const error = await device.popErrorScope();
    if (error) fail(`${c.op}: WebGPU validation: ${error.message}`);
  }
  if (errors.length) fail(`WebGPU errors: ${errors.join('; ')}`);
  process.stdout.write(`run_ops: ${describe(adapter)}: ${job.cases.length} cases, ${dispatches} dispatches, ` +
                       `${(performance.now() - t0).toFixed(0)} ms\n`);
  device.destroy();
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
