#!/usr/bin/env python3
"""The bounded serving load test of bench/serve_load.js for machines without Node (the GPU machine):
N client threads each send R streaming completions of a fixed prompt and a fixed output length
(ignore_eos) to a running `realizar serve`, then the same figures: TTFT p50/p99, inter-token p50/p99,
output tok/s, requests/s. Standard library only.
  python3 bench/serve_load.py --url http://127.0.0.1:8080 [--clients 16] [--requests 4] [--max-tokens 64]
        [--prompt-tokens 0 (the prompt repeated to about this many words)] [--prompt TEXT] [--api-key K]"""
import argparse, http.client, json, sys, threading, time, urllib.parse


def pct(a, p):
    if not a:
        return float("nan")
    s = sorted(a)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--prompt-words", type=int, default=0)
    ap.add_argument("--api-key", default="")
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args()
    u = urllib.parse.urlparse(a.url)
    prompt = a.prompt
    while a.prompt_words and len(prompt.split()) < a.prompt_words:
        prompt += " " + a.prompt
    body = json.dumps({"prompt": prompt, "max_tokens": a.max_tokens, "temperature": 0.8, "ignore_eos": True, "stream": True,
                       "stream_options": {"include_usage": True}})
    headers = {"Content-Type": "application/json"}
    if a.api_key:
        headers["Authorization"] = "Bearer " + a.api_key
    lock = threading.Lock()
    ttft, itl, stats = [], [], {"tokens": 0, "failed": 0, "done": 0, "prompt_tokens": 0}

    def one():
        t0 = time.perf_counter()
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)
        try:
            c.request("POST", "/v1/completions", body, headers)
            r = c.getresponse()
            if r.status != 200:
                r.read()
                raise RuntimeError(f"status {r.status}")
            first, last, finished, mine_t, mine_i, prompt_tokens = True, 0.0, False, [], [], 0
            for line in r:  # SSE: "data: {...}" lines and blank lines
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue
                if line == b"data: [DONE]":
                    finished = True
                    break
                j = json.loads(line[6:])
                if j.get("usage"):
                    prompt_tokens = j["usage"]["prompt_tokens"]
                if not j.get("choices") or not j["choices"][0].get("text"):
                    continue
                now = time.perf_counter()
                (mine_t if first else mine_i).append((now - (t0 if first else last)) * 1000)
                first, last = False, now
            if not finished:
                raise RuntimeError("stream ended without [DONE]")
            with lock:
                ttft.extend(mine_t), itl.extend(mine_i)
                stats["tokens"] += a.max_tokens
                stats["done"] += 1
                stats["prompt_tokens"] = prompt_tokens
        except Exception as e:  # noqa: BLE001 - every failure is counted and shown
            with lock:
                stats["failed"] += 1
            print(f"serve_load: request failed: {e}", file=sys.stderr)
        finally:
            c.close()

    def client():
        for _ in range(a.requests):
            one()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.perf_counter() - t0
    n = a.clients * a.requests
    print(f"serve_load: {stats['done']}/{n} requests ({a.clients} clients x {a.requests}, {a.max_tokens} tokens each, "
          f"prompt {len(prompt.split())} words = {stats['prompt_tokens']} tokens) in {secs:.3f} s | TTFT p50 {pct(ttft, 50):.2f} ms p99 {pct(ttft, 99):.2f} ms | "
          f"inter-token p50 {pct(itl, 50):.2f} ms p99 {pct(itl, 99):.2f} ms | {stats['tokens'] / secs:.1f} output tok/s | "
          f"{stats['done'] / secs:.2f} req/s | failed {stats['failed']}")
    sys.exit(1 if stats["failed"] or stats["done"] != n else 0)


if __name__ == "__main__":
    main()
