// Lookup of the embedded kernel sources (kernels.h); the table itself is generated at build time.
#include "cuda/kernels.h"

#include <string>

#include "core/strings.h"
#include "trueno/error.h"

namespace trueno::cuda {

bool is_header(const KernelSource& k) { return std::string_view(k.file).ends_with(".cuh"); }

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
