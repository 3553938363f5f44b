#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on one decode kernel of the synthesized 7B Q4_K_M, in the decode graph
# (one launch, after warm-up): speed of light, occupancy, warp states, memory, and the source counters
# (excess shared wavefronts and global sectors, where the stalls are). Built here and carried as
# scripts/device_ab.sh. KERNEL (default attention_one_pass_q8), DEPTH (default 16384), SKIP (launches of the
# kernel to skip, default 64), TRUENO_CUDA_DEFINES as usual.
#   KERNEL=gemv_q4_k DEPTH=0 bash scripts/device_ncu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
B=.device/bundle
for f in $B/bin/*.xz $B/lib/*.xz; do [ -f "$f" ] && xz -d "$f"; done
chmod +x $B/bin/*
export LD_LIBRARY_PATH=$PWD/$B/lib REALIZAR_PARITY_CACHE=off
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "device_ncu.sh: no ncu on this machine" >&2; exit 1; }
[ -f /tmp/7b.gguf ] || $B/bin/realizar synth --preset llama-7b --quant q4_k_m --out /tmp/7b.gguf >/dev/null
"$NCU" --kernel-name "${KERNEL:-attention_one_pass_q8}" --launch-skip "${SKIP:-64}" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
  --section SourceCounters \
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda --decode-attention q8 -p 0 -n 8 -r 1 -d "${DEPTH:-16384}" 2>&1 |
  grep -vE '^\s*$|^\s*-+\s*$|^==PROF=='
