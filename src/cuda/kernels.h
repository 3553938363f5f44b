// CUDA kernel sources embedded at build time (src/cuda/kernels/*.cu, one module per file), compiled by
// NVRTC on first use (nvrtc.h).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace trueno::cuda {

struct KernelSource {
  const char* module;  // the file name without its extension
  const char* file;    // kernels/<file>: a .cu module, or a .cuh header every module may include
  const char* source;
  const char* ptx;     // nvcc's PTX (compute_80) when nvcc was there at build time, else nullptr
};

// How modules become machine code on a device (Note [Kernel path], context.cpp).
enum class KernelPath { Nvrtc, DriverJitPtx, None };
inline constexpr int kMinComputeCapabilityMajor = 8;
// The path for a device of compute capability cc_major, or None with *why saying what is missing
// (a device older than kMinComputeCapabilityMajor has none).
KernelPath choose_kernel_path(int cc_major, bool have_nvrtc, bool have_ptx, std::string* why);
// Whether every module has embedded PTX (built with nvcc).
bool ptx_embedded();

extern const KernelSource kEmbeddedKernels[];
extern const std::size_t kEmbeddedKernelCount;

inline std::span<const KernelSource> kernel_sources() { return {kEmbeddedKernels, kEmbeddedKernelCount}; }

bool is_header(const KernelSource& k);

// The module's source; throws InvalidArgument listing the embedded modules when there is none.
const KernelSource& kernel_source(std::string_view module);

}  // namespace trueno::cuda
