// The CUDA driver and NVRTC, loaded at run time with dlopen: trueno links no CUDA library, so it builds
// and runs everywhere, and a machine without the driver (or without NVRTC) gets a reason, not a crash.
#pragma once
#include <string>

#include "trueno/cuda/driver_api.h"
#include "trueno/error.h"

namespace trueno::cuda {

// The handle types, for the entry-point tables below.
using api::CUcontext, api::CUdevice, api::CUdeviceptr, api::CUevent, api::CUfunction, api::CUgraph, api::CUgraphExec,
    api::CUmodule, api::CUresult, api::CUstream, api::nvrtcProgram, api::nvrtcResult, api::cublasHandle, api::cublasStatus,
    api::cublasLtHandle, api::cublasLtMatmulDesc, api::cublasLtMatrixLayout, api::cublasLtMatmulPreference, api::cublasLtMatmulAlgo,
    api::cublasLtMatmulHeuristicResult, api::CUlaunchConfig;

// A CUDA or NVRTC call failed; the message names the call, the error code's name and its description.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, int code) : Error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct Driver {
#define TRUENO_MEMBER(ret, member, symbol, params) ret(*member) params = nullptr;
  TRUENO_CUDA_DRIVER_FUNCTIONS(TRUENO_MEMBER)
#undef TRUENO_MEMBER
};

struct Nvrtc {
#define TRUENO_MEMBER(ret, member, symbol, params) ret(*member) params = nullptr;
  TRUENO_NVRTC_FUNCTIONS(TRUENO_MEMBER)
#undef TRUENO_MEMBER
  std::string library;  // the file that was loaded
  int major = 0, minor = 0;
};

struct Cublas {
#define TRUENO_MEMBER(ret, member, symbol, params) ret(*member) params = nullptr;
  TRUENO_CUBLAS_FUNCTIONS(TRUENO_MEMBER)
#undef TRUENO_MEMBER
  std::string library;
  int major = 0, minor = 0, patch = 0;
};

struct CublasLt {
#define TRUENO_MEMBER(ret, member, symbol, params) ret(*member) params = nullptr;
  TRUENO_CUBLASLT_FUNCTIONS(TRUENO_MEMBER)
#undef TRUENO_MEMBER
  std::string library;
};

// The loaded driver (every entry point resolved and cuInit(0) done), or nullptr with *why saying what is
// missing ("libcuda.so.1: cannot open shared object file ..." when no NVIDIA driver is installed).
const Driver* driver(std::string* why = nullptr);
// NVRTC, or nullptr with *why. Looks for libnvrtc.so, libnvrtc.so.13/.12/.11.2 on the library path
// and in $CUDA_HOME/lib64, /usr/local/cuda/lib64 (TRUENO_NVRTC=path overrides).
const Nvrtc* nvrtc(std::string* why = nullptr);

// cuBLAS (for prefill GEMMs), or nullptr with *why. Looks for libcublas.so, .so.13/.12/.11 like NVRTC
// (TRUENO_CUBLAS=path overrides). Loading needs no GPU; creating a handle does.
const Cublas* cublas(std::string* why = nullptr);
// cuBLASLt (FP8 prefill products), or nullptr with *why: libcublasLt.so, .so.13/.12/.11 (TRUENO_CUBLASLT=path).
const CublasLt* cublaslt(std::string* why = nullptr);

// Throws CudaError "<call>: CUDA_ERROR_X (description)" unless r is CUDA_SUCCESS.
void check(api::CUresult r, const char* call);
// Throws CudaError "<call>: <NVRTC error string>" unless r is NVRTC_SUCCESS.
void check_nvrtc(api::nvrtcResult r, const char* call);
// Throws CudaError "<call>: <cuBLAS status string>" unless s is CUBLAS_STATUS_SUCCESS.
void check_cublas(api::cublasStatus s, const char* call);

}  // namespace trueno::cuda
