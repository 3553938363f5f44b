// Splits a GGUF file into parts in llama.cpp's gguf-split format (the one the page reads): part 1 keeps
// every metadata key, each part adds split.no (u16), split.count (u16), split.tensors.count (i32) and holds
// a run of whole tensors; files PREFIX-00001-of-0000N.gguf. For tests (web/page_test.mjs) and for models
// above a browser's 2 GB per-file reading limit.
//   node web/split_gguf.mjs IN.gguf OUT_PREFIX N
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readGguf } from '../src/webgpu/js/gguf.mjs';

function writer() {
  const chunks = [];
  let size = 0;
  const put = (b) => (chunks.push(b), size += b.length);
  const num = (bytes, set) => { const b = new Uint8Array(bytes); set(new DataView(b.buffer)); put(b); };
  const w = {
    bytes: put,
    u16: (v) => num(2, (d) => d.setUint16(0, v, true)),
    u32: (v) => num(4, (d) => d.setUint32(0, v, true)),
    i32: (v) => num(4, (d) => d.setInt32(0, v, true)),
    u64: (v) => num(8, (d) => d.setBigUint64(0, BigInt(v), true)),
    str: (s) => { const b = new TextEncoder().encode(s); w.u64(b.length); put(b); },
    pad: (a) => { if (size % a) put(new Uint8Array(a - (size % a))); },
    size: () => size,
    join: () => { const out = new Uint8Array(size); let at = 0; for (const c of chunks) out.set(c, at), at += c.length; return out; },
  };
  return w;
}

// The parts (Uint8Array each) of bytes, a GGUF file, in n runs of tensors of about equal size.
export async function splitGguf(bytes, n) {
  const g = await readGguf(async (o, len) => bytes.subarray(o, o + len), bytes.length);
  const tensors = [...g.tensors.values()], total = tensors.reduce((s, t) => s + t.bytes, 0);
  if (n < 2 || n > tensors.length) throw new Error(`split_gguf: ${n} parts of ${tensors.length} tensors`);
  const runs = Array.from({ length: n }, () => []);
  let done = 0;
  for (const t of tensors) runs[Math.min(n - 1, Math.floor((done * n) / total))].push(t), done += t.bytes;
  if (runs.some((r) => r.length === 0)) throw new Error('split_gguf: a part would hold no tensor; use fewer parts');
  const nKv = Number(new DataView(bytes.buffer, bytes.byteOffset + 16, 8).getBigUint64(0, true));
  return runs.map((run, i) => {
    const w = writer();
    w.bytes(bytes.subarray(0, 8));  // magic, version
    w.u64(run.length);
    w.u64((i === 0 ? nKv : 0) + 3);
    if (i === 0) w.bytes(bytes.subarray(24, g.kvEnd));
    w.str('split.no'), w.u32(2), w.u16(i);
    w.str('split.count'), w.u32(2), w.u16(n);
    w.str('split.tensors.count'), w.u32(5), w.i32(tensors.length);
    let offset = 0;
    for (const t of run) {
      offset = Math.ceil(offset / g.alignment) * g.alignment;
      w.str(t.name), w.u32(t.dims.length);
      for (const d of t.dims) w.u64(d);
      w.u32(t.typeId), w.u64(offset);
      offset += t.bytes;
    }
    w.pad(g.alignment);
    for (const t of run) {
      w.pad(g.alignment);  // the data section starts aligned, so this is the offset written above
      w.bytes(bytes.subarray(t.offset, t.offset + t.bytes));
    }
    return w.join();
  });
}

export const partName = (prefix, i, n) => `${prefix}-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [input, prefix, n] = process.argv.slice(2);
  if (!input || !prefix || !(Number(n) >= 2)) {
    process.stderr.write('usage: node web/split_gguf.mjs IN.gguf OUT_PREFIX N (N >= 2)\n');
    process.exit(2);
  }
  const parts = await splitGguf(new Uint8Array(readFileSync(input)), Number(n));
  // Each part under a temporary name first, renamed into place: a failed write leaves no part that looks whole.
  parts.forEach((p, i) => {
    const name = partName(prefix, i, parts.length);
    writeFileSync(`${name}.tmp`, p);
    renameSync(`${name}.tmp`, name);
  });
  process.stdout.write(`${parts.length} parts: ${parts.map((_, i) => partName(prefix, i, parts.length)).join(' ')}\n`);
}
