// Kernels compiled at run time by NVRTC for the exact GPU (sm_XX -> cubin), cached on disk.
//
// Note [Cubin cache]
// An entry is keyed by everything that changes the machine code: the kernel source, the options, the
// architecture, the NVRTC version and the driver version; the key's hash names the file
// (<dir>/<module>-<hash>.cubin). The file starts with a header repeating the full key hash, the payload
// size and the payload's hash, so a truncated, corrupted or colliding entry is detected on load,
// logged, and rebuilt. Entries are written to a temporary file and renamed, so concurrent processes
// never read a half-written one. TRUENO_CUBIN_CACHE=<dir> moves the cache, =off disables it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "trueno/cuda/context.h"

namespace trueno::cuda {

// Kernel tuning knobs for experiments: TRUENO_CUDA_DEFINES="NAME=VALUE ..." adds -DNAME=VALUE to every
// NVRTC compilation (part of the cubin cache key); launchers whose grids depend on a knob read it here
// (fallback when unset). The defaults in the kernels are the measured best (docs/CUDA.md).
int tuning_define(std::string_view name, int fallback);

// kernels_identity(): trueno/cuda/context.h.

struct Cubin {
  std::vector<char> image;
  bool from_cache = false;
  std::string path;  // the cache entry ("" when caching is off)
};

// $TRUENO_CUBIN_CACHE, else $XDG_CACHE_HOME/trueno/cubin, else $HOME/.cache/trueno/cubin; "" = off.
std::string default_cache_dir();

// The NVRTC options used for sm_<arch> (compute capability major*10 + minor).
std::vector<std::string> compile_options(int arch);

// The cubin of module `name` for sm_<arch>: from cache_dir when a valid entry exists, else compiled with
// NVRTC (CudaError with the compiler log on failure) and stored there.
Cubin compile_cubin(std::string_view name, std::string_view source, int arch, int driver_version,
                    const std::string& cache_dir);

}  // namespace trueno::cuda
