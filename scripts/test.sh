#!/usr/bin/env bash
# The whole test suite, one build per configuration:
#   release  - unit + contract tests, plus the same binary under qemu-x86_64 -cpu Nehalem / Haswell
#   debug    - the same tests with AddressSanitizer + UndefinedBehaviorSanitizer (ASAN_OPTIONS=intercept_tls_get_addr=0,
#              the test preset's: with NVRTC compiling in the process, LeakSanitizer's scan of dynamic TLS blocks it
#              tracked read a stale block and crashed at exit in about half the runs of fake_gpu_trueno_unit; the
#              heap, stacks and static TLS are still scanned)
#   nocuda   - release without the CUDA backend (TRUENO_CUDA=OFF): builds and passes without any of its code
#   aarch64  - cross-compiled, every test run under qemu-aarch64 (the NEON backend; TRUENO_VULKAN=OFF:
#              the static binaries under qemu have no Vulkan loader to open)
#   wasm     - trueno + its tests for WebAssembly (emscripten), run under node: the scalar and wasm-simd
#              tiers (docs/BROWSER.md; about 2.5 min cold, 30 s with ccache); the page (build/wasm/web)
#              in headless Chromium (label browser, ~20 s)
# Installs missing Debian packages first (scripts/setup.sh --deps). Exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps
# ccache keys on paths relative to the checkout, so a fresh clone in another folder reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"

status=0
for preset in release debug nocuda aarch64 wasm; do
  echo "=== $preset ==="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j 2 || status=1
done
exit $status
