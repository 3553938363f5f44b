#!/usr/bin/env bash
# On the GPU machine: the whole test suite (not only the GPU subsets), once more with a fake second device,
# the parity table, and decode/prefill speed on a synthesized 7B Q4_K_M. Built here, carried there:
#   bash scripts/device_check.sh --bundle   (here: packs build/release executables + test data into .device/)
#   bash scripts/device_check.sh            (there, with .device carried; logs under $OUT when set)
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--bundle" ]; then
  rm -rf .device && mkdir -p .device
  bash ../shared/tools/device-bundle.sh .device/bundle build/release/tests/trueno_tests build/release/tests/realizar_tests \
    build/release/realizar/realizar build/release/bench/trueno_bench >/dev/null
  xz -T2 .device/bundle/lib/libopenblas.so.0  # 36 MB -> 4 MB: the carried tree's limit is 64 MiB
  du -sh .device
  exit 0
fi
out=${OUT:-/tmp/device_check}; mkdir -p "$out"
B=.device/bundle
[ -f $B/lib/libopenblas.so.0.xz ] && xz -d $B/lib/libopenblas.so.0.xz
# The Vulkan loader is not installed there: carry .gl (the loader's debs, docs/VULKAN.md) to test Vulkan too.
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export LD_LIBRARY_PATH=$PWD/$B/lib TRUENO_TESTDATA_DIR=$PWD/tests/data TRUENO_CONTRACTS_DIR=$PWD/contracts REALIZAR_PARITY_CACHE=off
nvidia-smi -L
status=0
for t in trueno_tests realizar_tests; do
  $B/bin/$t --gtest_brief=1 >"$out/$t.log" 2>&1 || status=1
  echo "$t: $(grep -E '^\[  (PASSED|FAILED) ' "$out/$t.log" | tr '\n' ' ')"; grep -E '^\[  FAILED  \] [A-Z]' "$out/$t.log" | head
done
# A fake second device beside the real one: tests that assume one device or none fail here.
TRUENO_FAKE_DEVICE=cuda $B/bin/trueno_tests --gtest_brief=1 "--gtest_filter=-Contract*:KernelContract*:CudaGpu*" >"$out/fake.log" 2>&1 || status=1
echo "fake device: $(grep -E '^\[  (PASSED|FAILED) ' "$out/fake.log" | tr '\n' ' ')"
$B/bin/realizar backends
$B/bin/realizar run -m models/stories260K.gguf -p "Once upon a time" -n 40 --temp 0 2>&1 | tail -4
for m in tiny2-qwen2-q4_k_m tiny-llama-q8_0; do $B/bin/realizar parity --layers -m tests/data/models/$m.gguf | tail -6; done
$B/bin/realizar parity -m tests/data/models/tiny-llama-q4_k_m.gguf --prefill-precision fp8 --backend cuda | tail -2
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  $B/bin/realizar synth --preset llama-7b --quant q4_k_m --out /tmp/7b.gguf >/dev/null 2>&1
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda -p 512 -n 128 -r 3 2>&1 | tee "$out/bench7b.log" | tail -4
  if [ -n "${VK_DRIVER_FILES:-}" ]; then  # issue 14's table: 7B and 1.1B through NVIDIA's Vulkan driver
    $B/bin/realizar bench -m /tmp/7b.gguf --backend vulkan -p 512 -n 128 -r 3 2>&1 | tee "$out/bench7b-vulkan.log" | tail -3
    $B/bin/realizar synth --preset llama-1b --quant q4_k_m --out /tmp/1b.gguf >/dev/null 2>&1
    $B/bin/realizar bench -m /tmp/1b.gguf --backend vulkan -p 512 -n 128 -r 3 2>&1 | tee "$out/bench1b-vulkan.log" | tail -3
    # Issue 17: the Vulkan modules built from CUDA through decy against the hand-written ones (within 10%).
    $B/bin/trueno_bench --benchmark_filter=BM_VulkanShadersFromCuda 2>&1 | grep -E '^BM_' | tee "$out/vulkan-from-cuda.log"
  fi
  # Aggregate decode of sequences stepped together (Note [CUDA batched step]).
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda -p 0 -n 64 -r 2 -c 128 --batch ${BATCHES:-1,4,16,64} 2>&1 | tee "$out/batch7b.log" | tail -6
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda --decode-gemv cublas-f16 -p 0 -n 64 -r 2 -c 128 --batch ${BATCHES:-1,4,16,64} 2>&1 | tail -6
fi
# Issue 15's table beyond the default run (EXTRA=1): FP8 prefill, the 1.1B model, the first prompt after
# load (Note [Warm at load]), decode at long contexts, and the CPU decode on this machine's Xeon with and
# without the packed Q4_K rows (Note [Packed CPU weights]) next to its read bandwidth.
if [ "${EXTRA:-0}" = 1 ]; then
  [ -f /tmp/7b.gguf ] || $B/bin/realizar synth --preset llama-7b --quant q4_k_m --out /tmp/7b.gguf >/dev/null 2>&1
  [ -f /tmp/1b.gguf ] || $B/bin/realizar synth --preset llama-1b --quant q4_k_m --out /tmp/1b.gguf >/dev/null 2>&1
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda --prefill-precision fp8 -p 512 -n 0 -r 3 2>&1 | tail -1
  $B/bin/realizar bench -m /tmp/1b.gguf --backend cuda -p 512 -n 128 -r 3 2>&1 | tail -2
  $B/bin/realizar bench -m /tmp/7b.gguf --backend cuda -p 0 -n 64 -r 2 -d 0,16384 2>&1 | tail -2
  prompt="The history of the city begins with a small settlement on the river, where traders from the north and the south met every spring to exchange grain, wool, salt and stories about the lands beyond the mountains"
  TRUENO_LOG=info $B/bin/realizar run -m /tmp/7b.gguf --backend cuda -p "$prompt" -n 16 --temp 0 2>&1 | grep -E "warmed|prompt:"
  $B/bin/trueno_bench --benchmark_filter='^read_bandwidth' --benchmark_min_time=0.3 2>&1 | grep -E '^read_bandwidth'
  for repack in 1 0; do
    echo "CPU decode, REALIZAR_REPACK=$repack:"
    REALIZAR_REPACK=$repack $B/bin/realizar bench -m /tmp/7b.gguf --backend avx512 -p 0 -n 16 -r 2 2>&1 | tail -1
    REALIZAR_REPACK=$repack $B/bin/realizar bench -m /tmp/1b.gguf --backend avx512 -p 0 -n 64 -r 2 2>&1 | tail -1
  done
fi
# The server on the GPU under the bounded load test (bench/serve_load.py: the GPU machine has no Node):
# issue 16's table (prompts of ~130 tokens: 20 words of this synthetic vocabulary, 128 output tokens),
# with the f16 GEMM operands resident (auto on the H200) and staged (Note [Resident f16 weights]).
if [ "${SERVE:-0}" = 1 ]; then
  [ -f /tmp/7b.gguf ] || $B/bin/realizar synth --preset llama-7b --quant q4_k_m --out /tmp/7b.gguf >/dev/null 2>&1
  for mode in ${SERVE_MODES:-auto staged}; do
    $B/bin/realizar serve -m /tmp/7b.gguf --backend cuda --gemm-weights $mode --port 18080 --parallel ${PARALLEL:-256} -c 512 \
      --max-queue 1024 --max-tokens 256 >"$out/serve-$mode.log" 2>&1 &
    pid=$!
    for i in $(seq 120); do curl -sf http://127.0.0.1:18080/health >/dev/null && break; sleep 1; done
    for c in ${CLIENTS:-1 8 32 64 128 256}; do
      echo "serve --gemm-weights $mode, $c clients:"
      python3 bench/serve_load.py --url http://127.0.0.1:18080 --clients $c --requests $((c < 32 ? 2 : 1)) --max-tokens 128 --prompt-words 20
    done
    curl -s http://127.0.0.1:18080/metrics | grep -E '^realizar_prefill_(chunks|passes|turns)_total'
    kill -TERM $pid; wait $pid
  done
fi
exit $status
