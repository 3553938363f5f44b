// The page in headless Chromium (CTest web_page_cpu / web_page_webgpu): serves the build folder on loopback
// (serve.mjs, COOP/COEP), opens index.html?autorun=1 with a backend forced, reads the page's "RESULT {json}"
// console line, saves a screenshot (DevTools protocol over --remote-debugging-pipe: no npm package), and
// checks the greedy text equals the CLI's (realizar.js under node, same prompt, -n 40, --temp 0).
//   node page_test.mjs --web DIR --backend auto|cpu|webgpu --cli realizar.js --model M.gguf --screenshot OUT.png [--case files|own-model]
// The page loads its bundled stories260K; --case own-model: the --model file (or split parts) instead.
// --threads N: the page's CPU threads (default: the browser's core count, at most 8).
// --case gate-fault (with --backend auto): WebGPU's logits moved one token on: the gate must reject WebGPU
// (the page says so) and the CPU must give the CLI's text.
// --case files: the model as 3 split parts (split_gguf.mjs), after three bad inputs (not GGUF, cut in the
// header, cut in the data) and an incomplete split, each of which must fail naming the file and what is wrong;
// then a second run whose stop button is pressed after STOP_AFTER tokens.
// Exit status 0: PASS; 1: FAIL; 77: skipped (no chromium; WebGPU: no adapter in it).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { serveFolder } from './serve.mjs';
import { partName, splitGguf } from './split_gguf.mjs';

const PROMPT = 'Once upon a time', N = 40, STOP_AFTER = 5, TIMEOUT_MS = 100_000;
const args = Object.fromEntries(process.argv.slice(2).reduce((out, a, i, all) => (a.startsWith('--') && out.push([a.slice(2), all[i + 1]]), out), []));

// { text, tokens } of the CLI's greedy run.
function cliRun() {
  const out = execFileSync(process.execPath, ['--no-experimental-fetch', args.cli, 'run', '-m', args.model, '-p', PROMPT, '-n', String(N), '--temp', '0',
    '--repeat-penalty', '1', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(out.trim().split('\n').pop());
}

// Chromium's DevTools protocol on fds 3 (in) and 4 (out): JSON messages ended by a NUL byte.
function devtools(child) {
  let id = 0, buffered = '';
  const waiting = new Map();
  child.stdio[4].on('data', (chunk) => {
    buffered += chunk.toString();
    let end;
    while ((end = buffered.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      if (msg.id && waiting.has(msg.id)) waiting.get(msg.id)(msg), waiting.delete(msg.id);
    }
  });
  return (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    waiting.set(++id, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
    child.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
  });
}

async function screenshot(send, path) {
  const { targetInfos } = await send('Target.getTargets');
  const page = targetInfos.find((t) => t.type === 'page');
  const { sessionId } = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
  const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
  writeFileSync(path, Buffer.from(data, 'base64'));
}

// The page's RESULT object (or { status: 'ERROR' } on a timeout or a crash), after the screenshot.
async function runPage(chromium, url) {
  const profile = mkdtempSync(join(tmpdir(), 'realizar-page-'));
  const child = spawn(chromium, ['--headless=new', '--no-sandbox', `--user-data-dir=${profile}`, '--enable-unsafe-webgpu', '--enable-logging=stderr',
    '--v=0', '--window-size=1000,800', '--remote-debugging-pipe', url], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const send = devtools(child);
  let buffered = '';
  const result = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ status: 'ERROR', why: `no RESULT within ${TIMEOUT_MS / 1000} s` }), TIMEOUT_MS);
    child.stderr.on('data', (chunk) => {
      buffered += chunk.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (/CONSOLE|Uncaught/.test(line) && !line.includes('"RESULT ')) process.stdout.write(`page: ${line.replace(/^.*?CONSOLE[^\]]*\] /, '')}\n`);
        const m = line.match(/"RESULT (\S+)", source:/);
        if (m) clearTimeout(timer), resolve(JSON.parse(decodeURIComponent(m[1])));
      }
    });
    child.on('exit', (code) => resolve({ status: 'ERROR', why: `chromium exited (${code}) without a RESULT line` }));
  });
  if (args.screenshot && child.exitCode === null) {
    try {
      await screenshot(send, args.screenshot);
      process.stdout.write(`screenshot: ${args.screenshot}\n`);
    } catch (e) {
      process.stdout.write(`screenshot failed: ${e.message}\n`);
    }
  }
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.on('exit', r));
    child.kill();
    await exited;
  }
  try {
    rmSync(profile, { recursive: true, force: true });
  } catch {
    // a helper process may still be writing its profile: left in the temporary folder
  }
  return result;
}

// The bad inputs and the split model, written under DIR/test-files; the page's model= list and the error
// each bad set must give.
async function badFilesCase() {
  const dir = join(args.web, 'test-files'), model = new Uint8Array(readFileSync(args.model));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'not.gguf'), 'This is a text file, not a model; the page must say so.\n');
  writeFileSync(join(dir, 'header-cut.gguf'), model.subarray(0, 200));
  writeFileSync(join(dir, 'data-cut.gguf'), model.subarray(0, model.length - 1000));
  const parts = await splitGguf(model, 3);
  parts.forEach((p, i) => writeFileSync(join(dir, partName('s260', i, 3)), p));
  const part = (i) => `test-files/${partName('s260', i, 3)}`;
  const expect = [
    ['test-files/not.gguf', /not\.gguf: not a GGUF file/],
    ['test-files/header-cut.gguf', /header-cut\.gguf: truncated inside its header/],
    ['test-files/data-cut.gguf', /data-cut\.gguf: truncated: tensor '[^']+' needs bytes/],
    [`${part(0)},${part(2)}`, /missing part 2 of 3 \(…-00002-of-00003\.gguf\)/],
  ];
  return { model: [...expect.map((e) => e[0]), [0, 1, 2].map(part).join(',')].join('|'), expect };
}

// --case own-model: the --model file (or, for NAME-00001-of-0000N.gguf, every part) linked under DIR/test-files.
function ownModel() {
  const dir = join(args.web, 'test-files'), split = args.model.match(/^(.*)-00001-of-(\d{5})\.gguf$/);
  mkdirSync(dir, { recursive: true });
  const sources = split ? [...Array(Number(split[2])).keys()].map((i) => partName(split[1], i, Number(split[2]))) : [args.model];
  const names = sources.map((src, i) => {
    const name = split ? partName('own', i, sources.length) : 'own.gguf';
    rmSync(join(dir, name), { force: true });
    symlinkSync(resolve(src), join(dir, name));
    return `test-files/${name}`;
  });
  return { model: names.join(',') };
}

async function main() {
  const chromium = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'].find(existsSync);
  if (!chromium) {
    process.stdout.write('skipped: no chromium (Debian: chromium; bash scripts/setup.sh --deps)\n');
    return 77;
  }
  const want = cliRun();
  const server = serveFolder(args.web);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const files = args.case === 'files' ? await badFilesCase() : args.case === 'own-model' ? ownModel() : null;
  const q = new URLSearchParams({ autorun: '1', backend: args.backend, prompt: PROMPT, n: String(N), temp: '0', threads: args.threads ?? '0',
    ...(files ? { model: files.model } : {}), ...(args.case === 'files' ? { stopAfter: String(STOP_AFTER) } : {}),
    ...(args.case === 'gate-fault' ? { fault: 'webgpu-logits' } : {}) });
  const t0 = Date.now();
  const r = await runPage(chromium, `http://127.0.0.1:${server.address().port}/index.html?${q}`);
  server.close();
  process.stdout.write(`page (${((Date.now() - t0) / 1000).toFixed(1)} s): ${r.status}, backend ${r.backend}: ${r.why}\n`);
  if (r.status === 'SKIP') return process.stdout.write(`skipped: ${r.why}\n`), 77;
  if (r.status !== 'DONE') return 1;
  if (args.case === 'gate-fault') {
    if (/no WebGPU/.test(r.why)) return process.stdout.write(`skipped: ${r.why}\n`), 77;
    if (r.backend !== 'cpu' || !/parity gate FAILED/.test(r.why))
      return process.stdout.write('FAIL: the parity gate must reject the faulty WebGPU logits and the page must say so\n'), 1;
  }
  process.stdout.write(`page text (${r.tokens} tokens, ${r.tokensPerSecond?.toFixed(1)} tokens/s): ${JSON.stringify(r.text)}\nCLI text: ${JSON.stringify(want.text)}\n`);
  for (const [i, [set, re]] of (files?.expect ?? []).entries()) {
    const got = r.loads?.[i]?.error ?? null;
    process.stdout.write(`${set}: ${got}\n`);
    if (!got || !re.test(got)) return process.stdout.write(`FAIL: loading ${set} must fail with an error matching ${re}\n`), 1;
  }
  if (args.case === 'files') {  // the stop button: a second run stopped after STOP_AFTER tokens, the CLI's first tokens
    const st = r.stopRun;
    process.stdout.write(`stop button: ${JSON.stringify(st && { tokens: st.tokens, stopped: st.stopped, ids: st.ids })}\n`);
    if (!st || !st.stopped || st.tokens < STOP_AFTER || st.tokens >= N || JSON.stringify(st.ids) !== JSON.stringify(want.tokens.slice(0, st.tokens)))
      return process.stdout.write(`FAIL: the stop button must end the second run after ${STOP_AFTER} tokens with the CLI's first tokens\n`), 1;
  }
  if (args.backend !== 'auto' && r.backend !== args.backend) return process.stdout.write(`FAIL: the page ran on ${r.backend}, not ${args.backend}\n`), 1;
  if (r.inWorker !== true) return process.stdout.write('FAIL: the model must run in the page\'s worker (engine_worker.js), not on its main thread\n'), 1;
  // Temperature 0 on WebGPU: the argmax on the GPU (4 bytes a token), not the sampler on logits read back.
  if (r.backend === 'webgpu' && r.greedyOnGpu !== true) return process.stdout.write('FAIL: greedy decoding on WebGPU must take the argmax on the GPU\n'), 1;
  if (JSON.stringify(r.ids) !== JSON.stringify(want.tokens))
    return process.stdout.write(`FAIL: the page's greedy tokens differ from the CLI's\npage: ${r.ids}\nCLI:  ${want.tokens}\n`), 1;
  // The texts too, unless the model prints invalid UTF-8 (stray byte tokens), which each side renders as U+FFFD its own way.
  if (r.text !== want.text && !want.text.includes('\ufffd')) return process.stdout.write('FAIL: the page\'s greedy text differs from the CLI\'s\n'), 1;
  process.stdout.write('PASS\n');
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  process.stderr.write(`page_test: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
