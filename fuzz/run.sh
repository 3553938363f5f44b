#!/usr/bin/env bash
# Runs the GGUF fuzzer for SECONDS (default 600) on 2 workers, seeded from the real test files
# (tests/data, or TRUENO_TESTDATA_DIR): bash fuzz/run.sh [seconds]. Findings land in build/fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
command -v clang++ >/dev/null || { echo "fuzz/run.sh: needs clang (Debian: apt-get install clang)" >&2; exit 2; }
cmake --preset fuzz >/dev/null && cmake --build --preset fuzz --target gguf_fuzz
corpus=build/fuzz/corpus findings=build/fuzz/findings
mkdir -p "$corpus" "$findings"
data=${TRUENO_TESTDATA_DIR:-tests/data}
cp "$data"/models/*.gguf "$data"/vocab/*.gguf "$corpus"/
./build/fuzz/fuzz/gguf_fuzz "$corpus" -max_total_time="$secs" -rss_limit_mb=4096 -malloc_limit_mb=2048 \
  -timeout=10 -max_len=8000000 -print_final_stats=1 -artifact_prefix="$findings/" -jobs=2 -workers=2
