#!/usr/bin/env bash
# Set-up + main job on a fresh Debian 12 machine: installs every dependency from Debian's packages
# (idempotent, apt-get only), builds the release preset, runs `realizar backends`, and tells a story
# with the demo model (`realizar run -m models/stories260K.gguf -p "Once upon a time"`).
#   bash scripts/setup.sh            # deps + build + realizar backends
#   bash scripts/setup.sh --deps     # dependencies only
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# Why each package: README.md, "Dependencies".
NATIVE_PKGS=(build-essential cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev libcli11-dev libopenblas-dev
  nlohmann-json3-dev libpcre2-dev libcpp-httplib-dev nodejs
  libvulkan-dev glslc mesa-vulkan-drivers libclang-14-dev chromium
  qemu-user g++-aarch64-linux-gnu
  emscripten googletest python3-yaml)
ARM64_PKGS=(libgtest-dev:arm64 libpcre2-dev:arm64)

install_deps() {
  local missing=() arch
  arch=$(dpkg --print-architecture)
  for p in "${NATIVE_PKGS[@]}" "${ARM64_PKGS[@]}"; do
    # Multi-Arch packages must be checked with the architecture, "all" packages without.
    dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$arch" >/dev/null 2>&1 || missing+=("$p")
  done
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    missing+=(update-needed)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
      "${NATIVE_PKGS[@]}" "${ARM64_PKGS[@]}"
  fi
  # The arm64 yaml-cpp -dev package cannot be installed beside the native one (same files, not
  # Multi-Arch): unpack its static library into a private sysroot for the aarch64 cross build.
  local sysroot=build/sysroot-aarch64
  if [ ! -f "$sysroot/usr/lib/aarch64-linux-gnu/libyaml-cpp.a" ]; then
    mkdir -p "$sysroot" build/debs
    (cd build/debs && apt-get download libyaml-cpp-dev:arm64)
    dpkg -x build/debs/libyaml-cpp-dev_*_arm64.deb "$sysroot"
  fi
  # decy's third-party harvest (docs/DECY.md, "Third-party kernels"): PyTorch's CUDA kernels as Debian's
  # libtorch-dev ships them. Its headers only, unpacked (installing the package would bring 180 packages).
  local torch=build/harvest/libtorch-dev
  if [ ! -f "$torch/usr/include/ATen/native/cuda/im2col.cuh" ]; then
    mkdir -p "$torch" build/debs
    (cd build/debs && apt-get download libtorch-dev)
    dpkg -x build/debs/libtorch-dev_*.deb "$torch"
  fi
}

install_deps
# npm: Debian's own package, unless the installed nodejs brings one (NodeSource's does, and conflicts with it).
if ! command -v npm >/dev/null; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends npm
fi
# The server tests' npm packages (the official openai SDK), pinned by tests/serve/package-lock.json.
if [ ! -d tests/serve/node_modules/openai ] || [ tests/serve/package-lock.json -nt tests/serve/node_modules/.package-lock.json ]; then
  (cd tests/serve && npm ci --no-audit --no-fund)
fi
# decy's WGSL runner (npm webgpu: Dawn, prebuilt), pinned by decy/wgsl_runner/package-lock.json; it runs on
# chromium's SwiftShader Vulkan driver (/usr/lib/chromium/vk_swiftshader_icd.json; docs/DECY.md, "WGSL").
if [ ! -f decy/wgsl_runner/node_modules/webgpu/package.json ] ||
   [ decy/wgsl_runner/package-lock.json -nt decy/wgsl_runner/node_modules/.package-lock.json ]; then
  (cd decy/wgsl_runner && npm ci --no-audit --no-fund)
fi
# The WebGPU backend's glue and its tests' harness (src/webgpu/js: npm webgpu = Dawn, prebuilt), pinned by
# its package-lock.json; like decy's runner it runs on chromium's SwiftShader Vulkan driver (docs/WEBGPU.md).
if [ ! -f src/webgpu/js/node_modules/webgpu/package.json ] ||
   [ src/webgpu/js/package-lock.json -nt src/webgpu/js/node_modules/.package-lock.json ]; then
  (cd src/webgpu/js && npm ci --no-audit --no-fund)
fi
[ "${1:-}" = "--deps" ] && exit 0

cmake --preset release
cmake --build --preset release
./build/release/realizar/realizar backends
echo
./build/release/realizar/realizar run -m models/stories260K.gguf -p "Once upon a time"
