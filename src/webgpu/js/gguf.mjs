// A GGUF reader for the WebGPU forward pass (model.mjs): the metadata and the tensor table from the
// file's head, tensors read one by one through `read(offset, length)` (Node: a file handle; a page:
// Blob.slice), so the whole file is never one buffer (../shared/docs/quant-formats.md has the format).

const TYPE_NAMES = { 0: 'f32', 1: 'f16', 2: 'q4_0', 8: 'q8_0', 12: 'q4_k', 13: 'q5_k', 14: 'q6_k', 30: 'bf16' };
const BLOCKS = { f32: [1, 4], f16: [1, 2], bf16: [1, 2], q4_0: [32, 18], q8_0: [32, 34], q4_k: [256, 144], q5_k: [256, 176], q6_k: [256, 210] };

class Cursor {
  constructor(bytes) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.bytes = bytes;
    this.at = 0;
  }
  need(n) {
    if (this.at + n > this.bytes.byteLength) throw new RangeError('gguf: the header is longer than what was read');
  }
  u8() { this.need(1); return this.view.getUint8(this.at++); }
  u32() { this.need(4); const v = this.view.getUint32(this.at, true); this.at += 4; return v; }
  i32() { this.need(4); const v = this.view.getInt32(this.at, true); this.at += 4; return v; }
  u64() {
    this.need(8);
    const v = this.view.getBigUint64(this.at, true);
    this.at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`gguf: a 64-bit value ${v} is too large`);
    return Number(v);
  }
  f32() { this.need(4); const v = this.view.getFloat32(this.at, true); this.at += 4; return v; }
  f64() { this.need(8); const v = this.view.getFloat64(this.at, true); this.at += 8; return v; }
  str() {
    const n = this.u64();
    this.need(n);
    const s = new TextDecoder().decode(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return s;
  }
  value(type) {
    switch (type) {
      case 0: return this.u8();
      case 1: { const v = this.u8(); return v > 127 ? v - 256 : v; }
      case 2: { this.need(2); const v = this.view.getUint16(this.at, true); this.at += 2; return v; }
      case 3: { this.need(2); const v = this.view.getInt16(this.at, true); this.at += 2; return v; }
      case 4: return this.u32();
      case 5: return this.i32();
      case 6: return this.f32();
      case 7: return this.u8() !== 0;
      case 8: return this.str();
      case 9: {
        const t = this.u32(), n = this.u64(), out = new Array(n);
        for (let i = 0; i < n; ++i) out[i] = this.value(t);
        return out;
      }
      case 10: return this.u64();
      case 11: { this.need(8); const v = Number(this.view.getBigInt64(this.at, true)); this.at += 8; return v; }
      case 12: return this.f64();
      default: throw new Error(`gguf: unknown metadata value type ${type}`);
    }
  }
}

// { metadata: Map, tensors: Map(name -> {type, typeId, dims, rel, offset (absolute), bytes}), kvEnd (where
// the tensor table starts), dataStart, alignment } from a reader read(offset, length) -> Promise<Uint8Array>.
// The head is read in growing pieces until it parses.
export async function readGguf(read, fileSize) {
  for (let headBytes = 1 << 20; ; headBytes *= 4) {
    const bytes = await read(0, Math.min(headBytes, fileSize));
    try {
      return parse(new Cursor(bytes));
    } catch (e) {
      if (!(e instanceof RangeError) || headBytes >= fileSize) throw e;
    }
  }
}

function parse(c) {
  if (c.u32() !== 0x46554747) throw new Error('gguf: not a GGUF file (bad magic)');
  const version = c.u32();
  if (version < 2) throw new Error(`gguf: version ${version} is not supported`);
  const nTensors = c.u64(), nKv = c.u64();
  const metadata = new Map();
  for (let i = 0; i < nKv; ++i) {
    const key = c.str();
    metadata.set(key, c.value(c.u32()));
  }
  const kvEnd = c.at;
  const infos = [];
  for (let i = 0; i < nTensors; ++i) {
    const name = c.str(), nd = c.u32(), dims = [];
    for (let d = 0; d < nd; ++d) dims.push(c.u64());
    const typeId = c.u32(), offset = c.u64();
    const type = TYPE_NAMES[typeId];
    if (!type) throw new Error(`gguf: tensor ${name} has type id ${typeId}, which is not read here (${Object.values(TYPE_NAMES).join(', ')})`);
    const [elems, bytes] = BLOCKS[type];
    infos.push({ name, type, typeId, dims, rel: offset, bytes: ((dims.reduce((a, b) => a * b, 1)) / elems) * bytes });
  }
  const alignment = metadata.get('general.alignment') ?? 32;
  const dataStart = Math.ceil(c.at / alignment) * alignment;
  const tensors = new Map(infos.map((t) => [t.name, { ...t, offset: dataStart + t.rel }]));
  return { metadata, tensors, kvEnd, dataStart, alignment };
}
