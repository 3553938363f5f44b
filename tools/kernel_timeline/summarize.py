#!/usr/bin/env python3
"""Summarize a kernel_timeline.so recording of decode steps: per token, what each kernel adds to the
token's time (its end minus the previous kernel's end, so programmatic dependent launch's overlap is
counted once), grouped by kernel name and grid. Tokens are cut after each `marker` kernel (the sampler's
last kernel by default); the last `tokens` whole tokens are used.
  summarize.py TIMELINE [--marker argmax_final] [--tokens 64]"""
import argparse
import collections
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("timeline")
ap.add_argument("--marker", default="argmax_final")
ap.add_argument("--tokens", type=int, default=64)
a = ap.parse_args()

rows = []
try:
    with open(a.timeline) as f:
        for number, line in enumerate(f, 1):
            p = line.split(maxsplit=6)
            if len(p) != 7:
                raise SystemExit(f"{a.timeline}:{number}: expected 'start end gx gy gz node name', got {line.strip()!r}")
            try:
                rows.append((int(p[0]), int(p[1]), f"{p[6].strip()} [{p[2]}x{p[3]}x{p[4]}]"))
            except ValueError:
                raise SystemExit(f"{a.timeline}:{number}: start and end must be integers (ns), got {line.strip()!r}")
except OSError as e:
    raise SystemExit(f"cannot read {a.timeline}: {e.strerror}")
rows.sort()
cuts = [i for i, r in enumerate(rows) if r[2].startswith(a.marker + " ")]
if len(cuts) < 3:
    raise SystemExit(f"fewer than 3 '{a.marker}' kernels in {a.timeline}")
cuts = cuts[-(a.tokens + 1):]
added = collections.defaultdict(list)
busy = collections.defaultdict(list)
overlap = collections.defaultdict(list)
token_ns = []
gap_ns = []
for t0, t1 in zip(cuts, cuts[1:]):
    token = rows[t0 + 1:t1 + 1]
    token_ns.append(token[-1][1] - rows[t0][1])
    per = collections.defaultdict(float)
    per_busy = collections.defaultdict(float)
    prev_end = token[0][0]  # the host's gap before a token's first kernel is reported apart
    gap_ns.append(token[0][0] - rows[t0][1])
    for s, e, name in token:
        per[name] += max(0, e - prev_end)
        per_busy[name] += e - s
        overlap[name].append(prev_end - s)
        prev_end = max(prev_end, e)
    for k in per:
        added[k].append(per[k])
        busy[k].append(per_busy[k])
n = len(token_ns)
med = statistics.median(token_ns)
print(f"{n} tokens, median {med / 1e3:.1f} us per token ({1e9 / med:.1f} tok/s under the tracer), of which "
      f"{statistics.median(gap_ns) / 1e3:.1f} us between tokens with no kernel running (the host; the tracer adds to it)")
print(f"{'us added/token':>14} {'share':>6} {'us running':>10} {'count':>5} {'start-prev end us':>17}  kernel [grid]")
for k in sorted(added, key=lambda k: -statistics.median(added[k])):
    count = sum(1 for r in rows[cuts[-2] + 1:cuts[-1] + 1] if r[2] == k)
    print(f"{statistics.median(added[k]) / 1e3:14.1f} {statistics.median(added[k]) / med:6.1%} {statistics.median(busy[k]) / 1e3:10.1f} "
          f"{count:5d} {-statistics.median(overlap[k]) / 1e3:17.2f}  {k}")
