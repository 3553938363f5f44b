// Whether multi-GPU groups can run here: NCCL comes with the CUDA backend (src/cuda/nccl.cpp); a build
// without it says so. TRUENO_WITH_NCCL_LOADER is set on this file by src/CMakeLists.txt when CUDA is built.
#include "trueno/comm.h"

#if TRUENO_WITH_NCCL_LOADER
namespace trueno::cuda {
CollectiveStatus nccl_status();  // src/cuda/nccl.cpp
}
#endif

namespace trueno {

CollectiveStatus multi_device_status() {
#if TRUENO_WITH_NCCL_LOADER
  return cuda::nccl_status();
#else
  return {false, "not built: NCCL groups come with the CUDA backend (TRUENO_CUDA=OFF in this build)"};
#endif
}

}  // namespace trueno
