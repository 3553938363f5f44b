// The WebGPU path of the page: the JavaScript forward pass (webgpu/model.mjs) on the weights of the image
// the CPU engine holds, and the parity gate that decides whether it is used: the prompt's last position and
// the CPU's greedy continuation, min_positions positions in all, each position's WebGPU logits against the
// WASM CPU's by contracts/gpu-parity.yaml's rule (parity.mjs's compare: cosine, argmax agreement, finite).
import { Kernels } from './webgpu/trueno_webgpu.mjs';
import { WebGpuModel } from './webgpu/model.mjs';
import { argmax, compare, gateNumbers } from './webgpu/parity.mjs';

const fetchText = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
};

// A device, or { why } saying why there is none.
export async function webgpuDevice() {
  if (!navigator.gpu) return { why: 'this browser has no navigator.gpu (WebGPU off or unsupported)' };
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return { why: 'navigator.gpu offers no adapter' };
  const device = await adapter.requestDevice({ requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize } });
  const info = adapter.info ?? {};
  const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || 'unnamed adapter';
  return { device, name: `${name}${adapter.isFallbackAdapter ? ' (fallback)' : ''}, shader-f16 ${adapter.features.has('shader-f16') ? 'yes' : 'no'}` };
}

export class GpuEngine {
  // plan: gguf_image.mjs's plan (tensor offsets in the image); cpu: a loaded CpuEngine (reads its image).
  // rollLogits: a fault for the tests (every logit moved one token on) that the gate must reject.
  static async create(device, plan, cpu, nCtx, { rollLogits = false } = {}) {
    const errors = [];
    device.onuncapturederror = (e) => errors.push(e.error.message);
    const kernels = await Kernels.create(device, (name) => fetchText(`shaders/${name}.wgsl`));
    const tensors = new Map(plan.tensors.map((t) => [t.name, t]));
    const model = await WebGpuModel.load(kernels, { metadata: plan.metadata, tensors }, async (o, n) => cpu.read(o, n), { nCtx, maxTokens: 64 });
    return new GpuEngine(model, errors, rollLogits);
  }

  constructor(model, errors, rollLogits) {
    this.model = model;
    this.errors = errors;
    this.rollLogits = rollLogits;
    this.pos = 0;
  }

  // ids at the current position, in calls of maxTokens; the last call's result.
  async run(ids, options) {
    let out;
    for (let i = 0; i < ids.length; i += this.model.maxTokens) {
      const chunk = ids.slice(i, i + this.model.maxTokens);
      out = await this.model.forward(chunk, this.pos, options);
      this.pos += chunk.length;
    }
    if (this.errors.length) throw new Error(`WebGPU: ${this.errors.join('; ')}`);
    return out;
  }

  // The last token's logits after running ids.
  async forward(ids) {
    const out = await this.run(ids), V = this.model.c.nVocab, last = out.subarray(out.length - V);
    return this.rollLogits ? last.map((_, i) => last[(i + 1) % V]) : last;
  }

  // Greedy decoding on the GPU: ids run at the current position and the last one's argmax comes back
  // (4 bytes instead of the vocabulary's logits). The sampler's greedy with no repeat penalty (the page's)
  // picks the same token: the largest logit, the lowest id among equals (parity.mjs checks the GPU's
  // argmax against the logits' in the gate). With the test fault (rolled logits) the logits path is kept.
  async forwardGreedy(ids) {
    if (this.rollLogits) return argmax(await this.forward(ids));
    const next = await this.run(ids, { logits: false });
    return next[next.length - 1];
  }

  reset() { this.pos = 0; }
  destroy() { this.model.destroy(); }

  // { ok, line }: the gate on ids (a tokenized probe prompt); both engines are reset afterwards by the caller.
  async gate(cpu, ids) {
    const gate = gateNumbers(await fetchText('gpu-parity.yaml'));
    const positions = gate.minPositions;
    cpu.reset(0, 0);
    this.reset();
    let minCos = 1, agree = 0, finite = true, firstBad = -1, fed = ids;
    for (let i = 0; i < positions; ++i) {
      cpu.forward(fed);
      const want = cpu.logits(), got = await this.forward(fed);
      const r = compare(got, want);
      minCos = Math.min(minCos, r.cosine), agree += r.same ? 1 : 0, finite &&= r.finite;
      if (firstBad < 0 && (r.cosine < gate.minCosine || !r.finite)) firstBad = i;
      fed = [argmax(want)];  // the CPU's greedy continuation, teacher-forced on both
    }
    const ok = firstBad < 0 && finite && agree >= gate.minArgmax * positions;
    const line = `parity gate ${ok ? 'passed' : 'FAILED'} on ${positions} positions: min cosine ${minCos.toFixed(6)} (>= ${gate.minCosine}), ` +
      `argmax ${agree}/${positions} (>= ${gate.minArgmax})` + (finite ? '' : ', non-finite logits') + (firstBad >= 0 ? `, first bad position ${firstBad}` : '');
    return { ok, line };
  }
}
