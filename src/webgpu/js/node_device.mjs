// Node side of the glue: a WebGPU device from npm `webgpu` (Dawn) and the shader loader reading
// src/webgpu/shaders/. On these machines Dawn needs Chromium's SwiftShader Vulkan driver
// (VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json; ../shared/docs/browser-testing.md).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { create, globals } from 'webgpu';

import { Kernels } from './trueno_webgpu.mjs';

const shaderDir = fileURLToPath(new URL('../shaders/', import.meta.url));

// Synchronous: an fs/promises read pending while Dawn starts has crashed dawn.node here (std::system_error).
export function loadShader(name) { return readFileSync(`${shaderDir}${name}.wgsl`, 'utf8'); }

// { adapter, device, kernels }, or throws naming why (no adapter: which driver to use).
// Note [Dawn instance lifetime]: the GPU object from create() must stay referenced while its devices
// live; once garbage-collected, dawn.node aborts (std::system_error) or crashes in a later call.
let gpu = null;

export async function openKernels(options = {}) {
  Object.assign(globalThis, globals);
  gpu ??= create([]);
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter (on these machines: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json)');
  const device = await adapter.requestDevice({ requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize } });
  const errors = [];
  device.onuncapturederror = (e) => errors.push(e.error.message);
  const kernels = await Kernels.create(device, loadShader, options);
  return { adapter, device, kernels, errors };
}

export function describe(adapter) {
  const i = adapter.info;
  return `${i.vendor} ${i.architecture} ${i.description}`.replace(/\s+/g, ' ').trim();
}
