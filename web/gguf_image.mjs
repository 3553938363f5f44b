// One GGUF image from one file or the parts of a split model, for realizar's reader in wasm memory:
// the heads of every part parsed (gguf.mjs), checked (magic, truncation, every split part present), and a
// merged header written: part 1's metadata as its bytes, every part's tensor table with offsets into one
// data section. The tensors are then copied one by one (Blob.slice) to their place: no file is ever one
// ArrayBuffer. Split format: llama.cpp's gguf-split (keys split.no, split.count, split.tensors.count;
// files NAME-00001-of-00003.gguf), the format other GGUF tools write and realizar's native reader opens
// (Note [Split GGUF files]).
import { readGguf } from './webgpu/gguf.mjs';

const CHUNK = 64 << 20;  // bytes read per Blob.slice: big tensors come in pieces

export function blobReader(file) {
  return async (offset, length) => {
    if (offset + length > file.size) throw new Error(`${file.name}: truncated: needs bytes up to ${offset + length}, the file has ${file.size}`);
    return new Uint8Array(await file.slice(offset, offset + length).arrayBuffer());
  };
}

async function readPart(file) {
  if (file.size < 24) throw new Error(`${file.name}: not a GGUF file (${file.size} bytes)`);
  const read = blobReader(file);
  const magic = new TextDecoder().decode(await read(0, 4));
  if (magic !== 'GGUF') throw new Error(`${file.name}: not a GGUF file (it starts with "${magic.replace(/[^\x20-\x7e]/g, '?')}", not "GGUF")`);
  let g;
  try {
    g = await readGguf(read, file.size);
  } catch (e) {
    throw new Error(`${file.name}: ${e instanceof RangeError ? `truncated inside its header (${file.size} bytes)` : e.message}`);
  }
  const head = await read(0, g.kvEnd);
  for (const t of g.tensors.values()) {
    if (t.offset + t.bytes > file.size)
      throw new Error(`${file.name}: truncated: tensor '${t.name}' needs bytes ${t.offset}..${t.offset + t.bytes}, the file has ${file.size}`);
  }
  return { file, g, head, no: g.metadata.get('split.no') ?? 0, count: g.metadata.get('split.count') ?? 1 };
}

// The parts in order, every one present, or an error naming what is missing or extra.
function orderParts(parts) {
  const count = parts[0].count;
  const names = parts.map((p) => p.file.name).join(', ');
  for (const p of parts) {
    if (p.count !== count) throw new Error(`${p.file.name}: split.count ${p.count}, but ${parts[0].file.name} says ${count}`);
  }
  if (count === 1 && parts.length > 1) throw new Error(`${parts.length} files selected (${names}) but they are not parts of one split model: select one file`);
  const byNo = new Map(parts.map((p) => [p.no, p]));
  if (byNo.size !== parts.length) throw new Error(`two files are the same split part (${names})`);
  const missing = [];
  for (let i = 0; i < count; ++i) if (!byNo.has(i)) missing.push(`part ${i + 1} of ${count} (…-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.gguf)`);
  if (missing.length) throw new Error(`split model incomplete: missing ${missing.join(', ')}; selected: ${names}. Select every part together`);
  const ordered = [...Array(count).keys()].map((i) => byNo.get(i));
  const total = ordered[0].g.metadata.get('split.tensors.count');
  const have = ordered.reduce((n, p) => n + p.g.tensors.size, 0);
  if (total !== undefined && total !== have) throw new Error(`split model: ${have} tensors in the parts, split.tensors.count says ${total}`);
  return ordered;
}

class ByteWriter {
  constructor() { this.chunks = []; this.size = 0; }
  bytes(b) { this.chunks.push(b); this.size += b.length; }
  u32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); this.bytes(b); }
  u64(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); this.bytes(b); }
  str(s) { const b = new TextEncoder().encode(s); this.u64(b.length); this.bytes(b); }
  pad(alignment) { const n = (alignment - (this.size % alignment)) % alignment; if (n) this.bytes(new Uint8Array(n)); }
  join() { const out = new Uint8Array(this.size); let at = 0; for (const c of this.chunks) out.set(c, at), at += c.length; return out; }
}

// { header: Uint8Array, size, tensors: [{name, type, dims, bytes, offset (in the image), read}], metadata,
// partNames } for files (File or Blob with .name): one model, or all the parts of one split model.
export async function planImage(files) {
  if (!files.length) throw new Error('no file selected');
  const parts = orderParts(await Promise.all([...files].map(readPart)));
  const first = parts[0], alignment = first.g.alignment;
  const tensors = [];
  let dataSize = 0;
  for (const p of parts) {
    const read = blobReader(p.file);
    for (const t of p.g.tensors.values()) {
      dataSize = Math.ceil(dataSize / alignment) * alignment;
      tensors.push({ ...t, offset: dataSize, from: t.offset, read, file: p.file.name });
      dataSize += t.bytes;
    }
  }
  const w = new ByteWriter();
  w.bytes(new TextEncoder().encode('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.bytes(first.head.subarray(16, first.g.kvEnd));  // part 1's metadata count and entries, byte for byte
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.typeId);
    w.u64(t.offset);
  }
  w.pad(alignment);
  const header = w.join();
  for (const t of tensors) t.offset += header.length;
  return { header, size: header.length + dataSize, tensors, metadata: first.g.metadata, partNames: parts.map((p) => p.file.name) };
}

// Copies the image's tensors to dest(offset, bytes) (wasm memory), CHUNK bytes at a time; progress(done, total).
export async function copyTensors(plan, dest, progress) {
  dest(0, plan.header);
  const total = plan.tensors.reduce((n, t) => n + t.bytes, 0);
  let done = 0;
  for (const t of plan.tensors) {
    for (let at = 0; at < t.bytes; at += CHUNK) {
      const n = Math.min(CHUNK, t.bytes - at);
      dest(t.offset + at, await t.read(t.from + at, n));
      done += n;
      progress(done, total, t.name);
    }
  }
}
