// Runs one decy-generated WGSL kernel under Dawn (npm `webgpu`, docs/DECY.md "WGSL") and writes its
// buffers back: the runtime check of `decy translate --target wgsl` (decy/decy_wgsl_test.cpp drives it).
//   node run_wgsl.mjs --wgsl K.wgsl --block N --grid X[,Y[,Z]] [--subgroups]
//        --buffer IN.bin ... [--uniform U.bin] --out I=OUT.bin ...
//   node run_wgsl.mjs --adapter     # one line: the adapter, its subgroup sizes and whether it has 'subgroups'
//   node run_wgsl.mjs --validate K.wgsl   # compiles it and builds its pipeline (decy_block_x = 64), runs nothing
// --buffer: one per storage binding, in binding order (decy's order: the pointer parameters), the file's
//   raw little-endian bytes as the buffer's initial contents; --uniform: the bytes of the scalar-parameter
//   struct (bound after the buffers, as the WGSL's header comment says); --out I=PATH: binding I's
//   contents after the dispatch. --block sets the override decy_block_x (CUDA's blockDim.x).
// Binding kinds (read-only storage, storage, uniform) are read from the WGSL's declarations.
// Exit status 0: done; 1: a WebGPU error or no adapter (the message names it); 2: bad usage.
// On these machines: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json (Chromium's SwiftShader:
// Dawn finds no adapter on Mesa's lavapipe; ../shared/docs/browser-testing.md).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

function usage(why) {
  process.stderr.write(`run_wgsl: ${why}\nusage: node run_wgsl.mjs --wgsl K.wgsl --block N --grid X[,Y[,Z]] ` +
                       `[--subgroups] --buffer IN.bin ... [--uniform U.bin] --out I=OUT.bin ...\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { buffers: [], outs: [], grid: null, block: null, subgroups: false };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${argv[i]} needs a value`));
    switch (argv[i]) {
      case '--wgsl': a.wgsl = value(); break;
      case '--block': a.block = Number(value()); break;
      case '--grid': a.grid = value().split(',').map(Number); break;
      case '--subgroups': a.subgroups = true; break;
      case '--buffer': a.buffers.push(value()); break;
      case '--uniform': a.uniform = value(); break;
      case '--out': {
        const [idx, path] = value().split(/=(.*)/s);
        a.outs.push({ binding: Number(idx), path });
        break;
      }
      default: usage(`unexpected argument '${argv[i]}'`);
    }
  }
  if (!a.wgsl || !a.grid || !Number.isInteger(a.block)) usage('--wgsl, --grid and --block are required');
  while (a.grid.length < 3) a.grid.push(1);
  return a;
}

// binding -> 'read-only-storage' | 'storage' | 'uniform', from `@group(0) @binding(i) var<...>`.
function bindingKinds(code) {
  const kinds = new Map();
  const re = /@group\(0\)\s*@binding\((\d+)\)\s*var<\s*(storage\s*,\s*read_write|storage\s*,\s*read|storage|uniform)\s*>/g;
  for (const m of code.matchAll(re)) {
    const k = m[2].replace(/\s/g, '');
    kinds.set(Number(m[1]), k === 'uniform' ? 'uniform' : k === 'storage,read_write' ? 'storage' : 'read-only-storage');
  }
  return kinds;
}

function fail(why) {
  process.stderr.write(`run_wgsl: ${why}\n`);
  process.exit(1);
}

async function main() {
  Object.assign(globalThis, globals);
  const gpu = create([]);
  const adapter = await gpu.requestAdapter();
  if (!adapter) fail('no WebGPU adapter (on these machines: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json)');
  if (process.argv[2] === '--adapter') {
    const i = adapter.info;
    process.stdout.write(`adapter ${i.vendor} ${i.architecture} ${i.description}; subgroup_min_size ${i.subgroupMinSize} ` +
                         `subgroup_max_size ${i.subgroupMaxSize} subgroups ${adapter.features.has('subgroups') ? 1 : 0}\n`);
    return;
  }
  if (process.argv[2] === '--validate') return validate(adapter, process.argv[3] ?? usage('--validate needs a file'));
  const args = parseArgs(process.argv.slice(2));
  const code = readFileSync(args.wgsl, 'utf8');
  const features = args.subgroups ? ['subgroups'] : [];
  for (const f of features) if (!adapter.features.has(f)) fail(`the adapter lacks the '${f}' feature`);
  const device = await adapter.requestDevice({ requiredFeatures: features });
  const errors = [];
  device.onuncapturederror = (e) => errors.push(e.error.message);
  device.pushErrorScope('validation');

  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const messages = info.messages.filter((m) => m.type === 'error');
  if (messages.length) fail(`${args.wgsl}: WGSL errors:\n` + messages.map((m) => `${args.wgsl}:${m.lineNum}:${m.linePos}: ${m.message}`).join('\n'));

  const kinds = bindingKinds(code);
  const expected = args.buffers.length + (args.uniform ? 1 : 0);
  if (kinds.size !== expected) fail(`${args.wgsl} declares ${kinds.size} bindings, the command line gives ${expected}`);
  const files = [...args.buffers, ...(args.uniform ? [args.uniform] : [])];
  const entries = [], layout = [], buffers = [];
  files.forEach((path, binding) => {
    const kind = kinds.get(binding);
    if (kind === undefined) fail(`${args.wgsl} declares no binding ${binding}`);
    if ((kind === 'uniform') !== (binding === args.buffers.length)) fail(`binding ${binding} is ${kind} in ${args.wgsl}`);
    const bytes = readFileSync(path);
    const size = Math.max(16, Math.ceil(bytes.length / 16) * 16);  // uniform: a multiple of 16; storage: of 4
    const usage = (kind === 'uniform' ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const buffer = device.createBuffer({ size, usage, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(bytes);
    buffer.unmap();
    buffers.push({ buffer, size: bytes.length });
    layout.push({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: kind } });
    entries.push({ binding, resource: { buffer } });
  });
  const bgl = device.createBindGroupLayout({ entries: layout });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [bgl] }),
    compute: { module, entryPoint: 'main', constants: { decy_block_x: args.block } },
  });
  const bindGroup = device.createBindGroup({ layout: bgl, entries });
  const readbacks = args.outs.map(({ binding, path }) => {
    if (!buffers[binding]) fail(`--out ${binding}: no such binding`);
    const size = Math.ceil(buffers[binding].size / 4) * 4;
    return { binding, path, size, buffer: device.createBuffer({ size: Math.max(size, 4), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) };
  });
  const t0 = performance.now();
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(...args.grid);
  pass.end();
  for (const r of readbacks) if (r.size) enc.copyBufferToBuffer(buffers[r.binding].buffer, 0, r.buffer, 0, r.size);
  device.queue.submit([enc.finish()]);
  const scope = await device.popErrorScope();
  if (scope) fail(`WebGPU validation: ${scope.message}`);
  for (const r of readbacks) {
    await r.buffer.mapAsync(GPUMapMode.READ);
    // Written to a temporary name and renamed into place: a failed run leaves no half-written output.
    writeFileSync(`${r.path}.tmp`, new Uint8Array(r.buffer.getMappedRange()).slice(0, buffers[r.binding].size));
    renameSync(`${r.path}.tmp`, r.path);
    r.buffer.unmap();
  }
  if (errors.length) fail(`WebGPU errors: ${errors.join('; ')}`);
  process.stdout.write(`run_wgsl: ${adapter.info.vendor} ${adapter.info.architecture} ${adapter.info.description}: ` +
                       `grid ${args.grid.join('x')} x block ${args.block}, ${(performance.now() - t0).toFixed(1)} ms\n`);
  device.destroy();
}

// The module compiles (errors as file:line:col) and its pipeline builds: Dawn as the WGSL validator.
async function validate(adapter, path) {
  const code = readFileSync(path, 'utf8');
  const features = /^\s*enable\s+subgroups\s*;/m.test(code) ? ['subgroups'] : [];
  for (const f of features) if (!adapter.features.has(f)) fail(`the adapter lacks the '${f}' feature`);
  const device = await adapter.requestDevice({ requiredFeatures: features });
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error');
  if (errors.length) fail(`${path}: WGSL errors:\n` + errors.map((m) => `${path}:${m.lineNum}:${m.linePos}: ${m.message}`).join('\n'));
  device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants: { decy_block_x: 64 } } });
  const scope = await device.popErrorScope();
  if (scope) fail(`${path}: WebGPU validation: ${scope.message}`);
  process.stdout.write(`run_wgsl: ${path}: valid\n`);
  device.destroy();
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
