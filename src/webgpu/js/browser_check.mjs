// Runs browser_check.html in headless Chromium (Debian's chromium; WebGPU on its SwiftShader) and reports
// its verdict: the glue, the forward pass and the parity check in a real browser, the model read with
// Blob.slice(). A loopback HTTP server serves the source tree (read-only: contracts/, src/webgpu/,
// tests/data/). ../shared/docs/browser-testing.md has the flags and the console-log recipe.
//   node browser_check.mjs SOURCE_DIR [--positions N] [NAME,NAME...]
// Exit status 0: PASS; 1: FAIL or an error; 77: skipped (no chromium, or no WebGPU adapter in it).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.json': 'application/json', '.wgsl': 'text/plain',
  '.yaml': 'text/plain' };
const SERVED = ['contracts/', 'src/webgpu/', 'tests/data/'];

function serve(root) {
  return createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^[/\\]+/, '');
    if (req.method !== 'GET' || path.includes('..') || !SERVED.some((p) => path.startsWith(p)) || !existsSync(join(root, path))) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream', 'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp' });
    res.end(readFileSync(join(root, path.split('/').join(sep))));
  });
}

async function main() {
  const [root, ...rest] = process.argv.slice(2);
  if (!root) {
    process.stderr.write('usage: node browser_check.mjs SOURCE_DIR [--positions N] [NAME,NAME...]\n');
    process.exit(2);
  }
  let positions = '';
  if (rest[0] === '--positions') positions = rest[1], rest.splice(0, 2);
  const names = rest[0] ?? 'stories260K.once';
  const chromium = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'].find(existsSync);
  if (!chromium) {
    process.stdout.write('skipped: no chromium (Debian: chromium; bash scripts/setup.sh --deps)\n');
    process.exit(77);
  }
  const server = serve(root);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/src/webgpu/js/browser_check.html?names=${names}` + (positions ? `&positions=${positions}` : '');
  const profile = mkdtempSync(join(tmpdir(), 'trueno-webgpu-chromium-'));
  const child = spawn(chromium, ['--headless=new', '--no-sandbox', `--user-data-dir=${profile}`, '--enable-unsafe-webgpu', '--enable-logging=stderr',
    '--v=0', url], { stdio: ['ignore', 'ignore', 'pipe'] });
  let result = null, buffered = '';
  await new Promise((resolve) => {
    child.stderr.on('data', (chunk) => {
      buffered += chunk.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const m = line.match(/CONSOLE.*?"(LINE|RESULT) (.*)", source:/);
        if (!m) continue;
        process.stdout.write(`${m[1] === 'LINE' ? '' : 'RESULT '}${m[2]}\n`);
        if (m[1] === 'RESULT') result = m[2], resolve();
      }
    });
    child.on('exit', resolve);
  });
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill();  // SIGTERM: chromium shuts its own helper processes down
    await exited;
  }
  server.close();
  try {
    rmSync(profile, { recursive: true, force: true });
  } catch {
    // a helper process may still be writing its profile: left in the temporary folder
  }
  if (result === null) {
    process.stdout.write('browser_check: chromium exited without a RESULT line\n');
    process.exit(1);
  }
  process.exit(result.startsWith('PASS') ? 0 : result.startsWith('SKIP') ? 77 : 1);
}

main().catch((e) => {
  process.stderr.write(`browser_check: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
