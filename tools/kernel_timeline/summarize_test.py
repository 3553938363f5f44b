#!/usr/bin/env python3
"""summarize.py on a made-up recording of four tokens whose numbers are known: kernel a runs 0-10 us of
a token, b 8-15 us (starting 2 us before a ends, as a programmatic dependent launch does), the sampler's
argmax_final 15-17 us, and the host waits 100 us before the next token. Each kernel must be charged only
the time it adds (a 10, b 5, argmax_final 2) and the host's gap reported apart."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "timeline.txt")
    with open(path, "w") as f:
        for t in range(4):
            base = t * 117_000
            for start, end, name in ((0, 10_000, "a"), (8_000, 15_000, "b"), (15_000, 17_000, "argmax_final")):
                f.write(f"{base + start} {base + end} 1 1 1 0 {name}\n")
    out = subprocess.run([sys.executable, os.path.join(here, "summarize.py"), path], capture_output=True, text=True, check=True).stdout
print(out)
lines = out.splitlines()
assert "3 tokens, median 117.0 us per token" in lines[0], lines[0]
assert "of which 100.0 us between tokens" in lines[0], lines[0]
added = {l.split()[-2]: float(l.split()[0]) for l in lines[2:]}
assert added == {"a": 10.0, "b": 5.0, "argmax_final": 2.0}, added
starts = {l.split()[-2]: float(l.split()[4]) for l in lines[2:]}
assert starts["b"] == -2.0, starts
# A malformed line is named with its file and line number, not a traceback.
with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, "bad.txt")
    with open(bad, "w") as f:
        f.write("1 2 1 1 1 0 a\nnot a line\n")
    r = subprocess.run([sys.executable, os.path.join(here, "summarize.py"), bad], capture_output=True, text=True)
    assert r.returncode != 0 and f"{bad}:2: expected" in r.stderr and "Traceback" not in r.stderr, r.stderr
print("ok")
