#!/usr/bin/env bash
# Runs the benchmark selection behind docs/PERFORMANCE.md (medians of interleaved repetitions:
# these machines are noisy) and writes build/bench/*.json and *.txt.
#   bash scripts/bench.sh [extra Google Benchmark flags]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/bench/trueno_bench
[ -x "$bin" ] || { cmake --preset release >/dev/null && cmake --build --preset release; }
mkdir -p build/bench
common=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true
        --benchmark_min_time=0.1 "$@")
run() {  # name filter
  "$bin" --benchmark_filter="$2" --benchmark_out="build/bench/$1.json" --benchmark_out_format=json "${common[@]}" \
    | tee "build/bench/$1.txt"
}
run reductions '^(dot|sum)/[a-z0-9]+/(1024|16384|16777216)$|^openblas_sdot/(1024|16384|16777216)$'
run elementwise '^(add|exp|silu|gelu_erf|tanh|softmax|rmsnorm|f32_to_f16)/[a-z0-9]+/(1024|16384|16777216)$|^memcpy_floats/(1024|16384|16777216)$|^api_'
run gemm '^matmul/'
