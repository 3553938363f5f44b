#!/usr/bin/env bash
# On the GPU machine: kernel variants chosen by TRUENO_CUDA_DEFINES (src/cuda/nvrtc.h), each first run
# through the GEMV tests, then benchmarked interleaved (decode tg128 on synthesized models, two rounds).
# Built here and carried in .device/bundle (realizar, trueno_tests), as scripts/device_check.sh --bundle.
#   bash scripts/device_ab.sh "" "TRUENO_GEMV_SHARED_X=1" "TRUENO_GEMV_ROWS=4 TRUENO_GEMV_STEPS=2"
# DEPTHS (e.g. 0,16384,32768) benches tg64 at those positions instead, with ATTENTION (default q8) as
# --decode-attention: the long-context attention's variants (the 7B only).
#   DEPTHS=0,16384,32768 bash scripts/device_ab.sh "" "TRUENO_ATTENTION_Q8_MIN_BLOCKS=4"
# MODELS (default "7b 1b 7b8": 7B Q4_K_M, 1.1B Q4_K_M, 7B Q8_0) limits the tg128 benches to some of them.
#   MODELS=7b8 bash scripts/device_ab.sh "" "TRUENO_Q8_0_SPLIT=0"
set -uo pipefail
cd "$(dirname "$0")/.."
B=.device/bundle
for f in $B/bin/*.xz $B/lib/*.xz; do [ -f "$f" ] && xz -d "$f"; done
chmod +x $B/bin/*
export LD_LIBRARY_PATH=$PWD/$B/lib TRUENO_TESTDATA_DIR=$PWD/tests/data TRUENO_CONTRACTS_DIR=$PWD/contracts REALIZAR_PARITY_CACHE=off
for m in "7b q4_k_m llama-7b" "1b q4_k_m llama-1b" "7b8 q8_0 llama-7b"; do
  read -r name quant preset <<<"$m"
  [ -f /tmp/$name.gguf ] || $B/bin/realizar synth --preset $preset --quant $quant --out /tmp/$name.gguf >/dev/null 2>&1 &
done
for v in "$@"; do
  echo "tests [$v]: $(TRUENO_CUDA_DEFINES="$v" $B/bin/trueno_tests --gtest_brief=1 --gtest_filter='CudaGpu.Gemv*:CudaGpu.*Decode*:CudaGpu.*Batch*:CudaGpu.Attention*:Cuda.*' 2>&1 | grep -E '^\[  (PASSED|FAILED) ' | tr '\n' ' ')"
done
wait
if [ -n "${DEPTHS:-}" ]; then
  for r in 1 2; do
    for v in "$@"; do
      echo "7b [$v] r$r: $(TRUENO_CUDA_DEFINES="$v" $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda --decode-attention "${ATTENTION:-q8}" \
        -p 0 -n 64 -r 2 -d "$DEPTHS" 2>&1 | grep tg64 | awk -F'|' '{print $6 $7}' | tr '\n' ';')"
    done
  done
  exit 0
fi
for r in 1 2; do
  for v in "$@"; do
    for m in ${MODELS:-7b 1b 7b8}; do
      echo "$m [$v] r$r: $(TRUENO_CUDA_DEFINES="$v" $B/bin/realizar bench -m /tmp/$m.gguf --backend cuda -p 0 -n 128 -r 2 2>&1 | tail -1 | cut -c90-)"
    done
  done
done
