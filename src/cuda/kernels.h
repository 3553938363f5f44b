// CUDA kernel sources embedded at build time (src/cuda/kernels/*.cu, one module per file), compiled by
// NVRTC on first use (nvrtc.h).
#pragma once
#include <cstddef>
#include <span>
#include <string_view>

namespace trueno::cuda {

struct KernelSource {
  const char* module;  // the file name without its extension
  const char* file;    // kernels/<file>: a .cu module, or a .cuh header every module may include
  const char* source;
};

extern const KernelSource kEmbeddedKernels[];
extern const std::size_t kEmbeddedKernelCount;

inline std::span<const KernelSource> kernel_sources() { return {kEmbeddedKernels, kEmbeddedKernelCount}; }

bool is_header(const KernelSource& k);

// The module's source; throws InvalidArgument listing the embedded modules when there is none.
const KernelSource& kernel_source(std::string_view module);

}  // namespace trueno::cuda
