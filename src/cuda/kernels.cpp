// Lookup of the embedded kernel sources (kernels.h); the table itself is generated at build time.
#include "cuda/kernels.h"

#include <string>

#include "core/strings.h"
#include "trueno/error.h"

namespace trueno::cuda {

bool is_header(const KernelSource& k) { return std::string_view(k.file).ends_with(".cuh"); }

bool ptx_embedded() {
  for (const KernelSource& k : kernel_sources())
    if (!is_header(k) && k.ptx == nullptr) return false;
  return true;
}

KernelPath choose_kernel_path(int cc_major, bool have_nvrtc, bool have_ptx, std::string* why) {
  // The kernels use cp.async, bf16 and the mma shapes of sm_80; the embedded PTX targets compute_80.
  if (cc_major < kMinComputeCapabilityMajor) {
    if (why) *why = strcat("compute capability ", cc_major, ".x is too old: trueno's CUDA kernels need ", kMinComputeCapabilityMajor, ".0 or newer (Ampere)");
    return KernelPath::None;
  }
  if (have_nvrtc) return KernelPath::Nvrtc;
  if (cc_major >= 12) {
    if (why) *why = strcat("NVRTC is required on compute capability ", cc_major, ".x: the driver's PTX JIT miscompiles there");
    return KernelPath::None;
  }
  if (have_ptx) return KernelPath::DriverJitPtx;
  if (why) *why = "no NVRTC, and this build embedded no PTX (nvcc was not found when it was built)";
  return KernelPath::None;
}

const KernelSource& kernel_source(std::string_view module) {
  std::string names;
  for (const KernelSource& k : kernel_sources()) {
    if (is_header(k)) continue;
    if (module == k.module) return k;
    names += (names.empty() ? "" : ", ") + std::string(k.module);
  }
  throw InvalidArgument(strcat("no embedded CUDA module '", module, "'; embedded: ", names));
}

}  // namespace trueno::cuda
