// A loopback HTTP server for the page's build folder with the headers WebAssembly threads need
// (Cross-Origin-Opener-Policy + Cross-Origin-Embedder-Policy: SharedArrayBuffer) and the right MIME types.
//   node web/serve.mjs build/wasm/web [PORT]      then open http://127.0.0.1:PORT/
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css',
  '.wgsl': 'text/plain', '.yaml': 'text/plain', '.json': 'application/json', '.gguf': 'application/octet-stream', '.png': 'image/png' };

export function serveFolder(root) {
  const base = resolve(root);
  return createServer((req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.endsWith('/')) path += 'index.html';
    const file = join(base, path);
    let size = -1;
    try {
      if (file.startsWith(base) && req.method === 'GET') size = statSync(file).isFile() ? statSync(file).size : -1;
    } catch { /* missing: 404 below */ }
    if (size < 0) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': size,
      'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [root, port = '8765'] = process.argv.slice(2);
  if (!root) {
    process.stderr.write('usage: node web/serve.mjs BUILD/wasm/web [PORT]\n');
    process.exit(2);
  }
  serveFolder(root).listen(Number(port), '127.0.0.1', () => process.stdout.write(`serving ${root} on http://127.0.0.1:${port}/\n`));
}
