#!/usr/bin/env node
// A bounded load test of `realizar serve` (or any OpenAI-compatible server) on loopback: N concurrent
// clients each send R streaming completions of a fixed prompt and a fixed output length (ignore_eos), then
// it prints TTFT p50/p99, inter-token p50/p99, output tokens/s and requests/s, and exits (1 if any failed).
//   node bench/serve_load.js --url http://127.0.0.1:8080 [--clients 16] [--requests 4] [--max-tokens 64]
//        [--prompt "Once upon a time"] [--api-key K] [--json]
// Without --url it starts `realizar serve` itself: --bin BUILD/realizar --model MODEL [--parallel N] [--threads T].
// Needs only Node >= 18 (fetch); no npm packages.
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : def;
};
const clients = Number(opt('clients', 16)), perClient = Number(opt('requests', 4)), maxTokens = Number(opt('max-tokens', 64));
const prompt = opt('prompt', 'Once upon a time'), key = opt('api-key', '');
let url = opt('url', '');
let proc = null;

if (!url) {
  const bin = opt('bin'), model = opt('model');
  if (!bin || !model) {
    console.error('serve_load: give --url, or --bin and --model to start a server');
    process.exit(2);
  }
  proc = spawn(bin, ['serve', '-m', model, '--port', '0', '--parallel', opt('parallel', String(clients)), '-c', opt('ctx', '512'),
    '--max-queue', String(clients * 2), '-t', opt('threads', '0')], { stdio: ['ignore', 'inherit', 'pipe'] });
  url = await new Promise((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error('server did not start:\n' + err)), 20000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(err);
      if (m) { clearTimeout(t); resolve(m[1]); }
    });
    proc.on('exit', (c) => reject(new Error('server exited ' + c + ':\n' + err)));
  });
}

const ttft = [], itl = [];
let tokens = 0, failed = 0, done = 0;

async function one() {
  const t0 = performance.now();
  const r = await fetch(url + '/v1/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key ? { Authorization: 'Bearer ' + key } : {}) },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, temperature: 0.8, ignore_eos: true, stream: true }),
  });
  if (r.status !== 200) { failed++; await r.text(); return; }
  const dec = new TextDecoder();
  let buf = '', last = 0, n = 0, finished = false;
  for await (const part of r.body) {
    buf += dec.decode(part, { stream: true });
    let k;
    while ((k = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, k);
      buf = buf.slice(k + 2);
      if (!ev.startsWith('data: ')) continue;
      if (ev === 'data: [DONE]') { finished = true; continue; }
      const j = JSON.parse(ev.slice(6));
      if (!j.choices?.[0]?.text) continue;  // the finish chunk
      const now = performance.now();
      // A chunk may carry several tokens when the reader is behind; count tokens from usage at the end.
      if (n === 0) ttft.push(now - t0); else itl.push(now - last);
      last = now;
      n++;
    }
  }
  if (!finished) { failed++; return; }
  tokens += maxTokens;
  done++;
}

const t0 = performance.now();
await Promise.all(Array.from({ length: clients }, async () => { for (let i = 0; i < perClient; i++) await one(); }));
const secs = (performance.now() - t0) / 1000;
const pct = (a, p) => { if (!a.length) return NaN; const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]; };
const res = {
  clients, requests: clients * perClient, completed: done, failed, max_tokens: maxTokens, seconds: +secs.toFixed(3),
  ttft_ms_p50: +pct(ttft, 50).toFixed(2), ttft_ms_p99: +pct(ttft, 99).toFixed(2),
  itl_ms_p50: +pct(itl, 50).toFixed(2), itl_ms_p99: +pct(itl, 99).toFixed(2),
  output_tokens_per_s: +(tokens / secs).toFixed(1), requests_per_s: +(done / secs).toFixed(2),
};
if (args.includes('--json')) console.log(JSON.stringify(res));
else console.log(`serve_load: ${res.completed}/${res.requests} requests (${clients} clients x ${perClient}, ${maxTokens} tokens each) in ${res.seconds} s | ` +
  `TTFT p50 ${res.ttft_ms_p50} ms p99 ${res.ttft_ms_p99} ms | inter-token p50 ${res.itl_ms_p50} ms p99 ${res.itl_ms_p99} ms | ` +
  `${res.output_tokens_per_s} output tok/s | ${res.requests_per_s} req/s | failed ${failed}`);
if (proc) { proc.kill('SIGTERM'); await new Promise((r) => proc.on('exit', r)); }
process.exit(failed || done !== clients * perClient ? 1 : 0);
