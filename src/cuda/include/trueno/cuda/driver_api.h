// The few CUDA driver and NVRTC entry points trueno uses, declared by hand (types, constants and
// signatures as in the toolkit's cuda.h / nvrtc.h) so that nothing here needs the CUDA headers: the
// project builds on machines without CUDA and loads the libraries at run time (loader.h).
#pragma once
#include <cstddef>

namespace trueno::cuda::api {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUmod_st;
using CUmodule = CUmod_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;
struct CUgraph_st;
using CUgraph = CUgraph_st*;
struct CUgraphExec_st;
using CUgraphExec = CUgraphExec_st*;

constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNoDevice = 100;

// CUdevice_attribute values.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

constexpr unsigned kStreamNonBlocking = 1;
constexpr int kStreamCaptureModeThreadLocal = 1;
constexpr unsigned kEventDefault = 0;
constexpr unsigned kEventDisableTiming = 2;

// cuLaunchKernelEx's configuration (cuda.h's CUlaunchConfig / CUlaunchAttribute: a 4-byte id, padding,
// a 64-byte value union).
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    int i;
    char bytes[64];
  } value;
};
struct CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  CUlaunchAttribute* attrs;
  unsigned n_attrs;
};
constexpr int kLaunchAttrProgrammaticStreamSerialization = 6;

using nvrtcResult = int;
struct _nvrtcProgram;
using nvrtcProgram = _nvrtcProgram*;

// X(return type, member name, exported symbol, parameter list)
#define TRUENO_CUDA_DRIVER_FUNCTIONS(X)                                                                       \
  X(CUresult, init, "cuInit", (unsigned flags))                                                               \
  X(CUresult, driver_version, "cuDriverGetVersion", (int* version))                                           \
  X(CUresult, device_count, "cuDeviceGetCount", (int* count))                                                 \
  X(CUresult, device_get, "cuDeviceGet", (CUdevice * dev, int ordinal))                                       \
  X(CUresult, device_name, "cuDeviceGetName", (char* name, int len, CUdevice dev))                            \
  X(CUresult, device_attribute, "cuDeviceGetAttribute", (int* value, int attribute, CUdevice dev))            \
  X(CUresult, device_total_mem, "cuDeviceTotalMem_v2", (std::size_t * bytes, CUdevice dev))                   \
  X(CUresult, primary_ctx_retain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice dev))                \
  X(CUresult, primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev))                            \
  X(CUresult, ctx_set_current, "cuCtxSetCurrent", (CUcontext ctx))                                            \
  X(CUresult, ctx_synchronize, "cuCtxSynchronize", ())                                                        \
  X(CUresult, launch_kernel_ex, "cuLaunchKernelEx",                                                           \
    (const CUlaunchConfig* config, CUfunction f, void** params, void** extra))                                 \
  X(CUresult, mem_get_info, "cuMemGetInfo_v2", (std::size_t * free, std::size_t * total))                    \
  X(CUresult, mem_alloc, "cuMemAlloc_v2", (CUdeviceptr * ptr, std::size_t bytes))                             \
  X(CUresult, mem_free, "cuMemFree_v2", (CUdeviceptr ptr))                                                    \
  X(CUresult, mem_alloc_host, "cuMemAllocHost_v2", (void** ptr, std::size_t bytes))                           \
  X(CUresult, mem_free_host, "cuMemFreeHost", (void* ptr))                                                    \
  X(CUresult, memcpy_htod, "cuMemcpyHtoD_v2", (CUdeviceptr dst, const void* src, std::size_t bytes))          \
  X(CUresult, memcpy_dtoh, "cuMemcpyDtoH_v2", (void* dst, CUdeviceptr src, std::size_t bytes))                \
  X(CUresult, memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2", (void* dst, CUdeviceptr src, std::size_t bytes, CUstream s)) \
  X(CUresult, memcpy_dtod_async, "cuMemcpyDtoDAsync_v2",                                                      \
    (CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream))                                   \
  X(CUresult, memset_d8_async, "cuMemsetD8Async", (CUdeviceptr dst, unsigned char v, std::size_t n, CUstream s)) \
  X(CUresult, module_load_data, "cuModuleLoadData", (CUmodule * mod, const void* image))                      \
  X(CUresult, occupancy_max_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor", (int* n, CUfunction f, int block, std::size_t smem)) \
  X(CUresult, module_unload, "cuModuleUnload", (CUmodule mod))                                                \
  X(CUresult, func_set_attribute, "cuFuncSetAttribute", (CUfunction f, int attribute, int value))             \
  X(CUresult, module_get_function, "cuModuleGetFunction", (CUfunction * fn, CUmodule mod, const char* name))  \
  X(CUresult, launch_kernel, "cuLaunchKernel",                                                                \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,               \
     unsigned shared_bytes, CUstream stream, void** params, void** extra))                                    \
  X(CUresult, stream_create, "cuStreamCreate", (CUstream * stream, unsigned flags))                           \
  X(CUresult, stream_destroy, "cuStreamDestroy_v2", (CUstream stream))                                        \
  X(CUresult, stream_synchronize, "cuStreamSynchronize", (CUstream stream))                                   \
  X(CUresult, event_create, "cuEventCreate", (CUevent * ev, unsigned flags))                                  \
  X(CUresult, event_destroy, "cuEventDestroy_v2", (CUevent ev))                                               \
  X(CUresult, event_record, "cuEventRecord", (CUevent ev, CUstream stream))                                   \
  X(CUresult, event_synchronize, "cuEventSynchronize", (CUevent ev))                                          \
  X(CUresult, stream_wait_event, "cuStreamWaitEvent", (CUstream stream, CUevent ev, unsigned flags))          \
  X(CUresult, event_elapsed, "cuEventElapsedTime_v2|cuEventElapsedTime", (float* ms, CUevent start, CUevent end))                   \
  X(CUresult, memcpy_htod_async, "cuMemcpyHtoDAsync_v2", (CUdeviceptr dst, const void* src, std::size_t bytes, CUstream s)) \
  X(CUresult, stream_begin_capture, "cuStreamBeginCapture_v2", (CUstream stream, int mode))                   \
  X(CUresult, stream_end_capture, "cuStreamEndCapture", (CUstream stream, CUgraph * graph))                   \
  X(CUresult, graph_instantiate, "cuGraphInstantiateWithFlags", (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
  X(CUresult, graph_launch, "cuGraphLaunch", (CUgraphExec exec, CUstream stream))                             \
  X(CUresult, graph_exec_destroy, "cuGraphExecDestroy", (CUgraphExec exec))                                   \
  X(CUresult, graph_destroy, "cuGraphDestroy", (CUgraph graph))                                               \
  X(CUresult, error_name, "cuGetErrorName", (CUresult r, const char** s))                                     \
  X(CUresult, error_string, "cuGetErrorString", (CUresult r, const char** s))

#define TRUENO_NVRTC_FUNCTIONS(X)                                                                             \
  X(nvrtcResult, version, "nvrtcVersion", (int* major, int* minor))                                           \
  X(const char*, error_string, "nvrtcGetErrorString", (nvrtcResult r))                                        \
  X(nvrtcResult, create_program, "nvrtcCreateProgram",                                                        \
    (nvrtcProgram * prog, const char* src, const char* name, int n_headers, const char* const* headers,        \
     const char* const* include_names))                                                                       \
  X(nvrtcResult, destroy_program, "nvrtcDestroyProgram", (nvrtcProgram * prog))                               \
  X(nvrtcResult, compile_program, "nvrtcCompileProgram", (nvrtcProgram prog, int n_options, const char* const* options)) \
  X(nvrtcResult, log_size, "nvrtcGetProgramLogSize", (nvrtcProgram prog, std::size_t * size))                 \
  X(nvrtcResult, log, "nvrtcGetProgramLog", (nvrtcProgram prog, char* log))                                   \
  X(nvrtcResult, cubin_size, "nvrtcGetCUBINSize", (nvrtcProgram prog, std::size_t * size))                    \
  X(nvrtcResult, cubin, "nvrtcGetCUBIN", (nvrtcProgram prog, char* cubin))

using cublasStatus = int;
struct cublasContext;
using cublasHandle = cublasContext*;
constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14;  // cudaDataType
constexpr int kCublasCompute32F = 68;                         // cublasComputeType_t: f32 accumulation
constexpr int kCublasGemmDefault = -1;

#define TRUENO_CUBLAS_FUNCTIONS(X)                                                                            \
  X(cublasStatus, get_property, "cublasGetProperty", (int type, int* value))                                  \
  X(const char*, status_string, "cublasGetStatusString", (cublasStatus s))                                    \
  X(cublasStatus, create, "cublasCreate_v2", (cublasHandle * handle))                                         \
  X(cublasStatus, destroy, "cublasDestroy_v2", (cublasHandle handle))                                         \
  X(cublasStatus, set_stream, "cublasSetStream_v2", (cublasHandle handle, CUstream stream))                   \
  X(cublasStatus, set_workspace, "cublasSetWorkspace_v2", (cublasHandle handle, void* workspace, std::size_t bytes)) \
  X(cublasStatus, gemm_ex, "cublasGemmEx",                                                                    \
    (cublasHandle handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a, int a_type, \
     int lda, const void* b, int b_type, int ldb, const void* beta, void* c, int c_type, int ldc, int compute, int algo)) \
  X(cublasStatus, gemm_strided_batched_ex, "cublasGemmStridedBatchedEx",                                      \
    (cublasHandle handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a, int a_type, \
     int lda, long long stride_a, const void* b, int b_type, int ldb, long long stride_b, const void* beta, void* c,   \
     int c_type, int ldc, long long stride_c, int batch, int compute, int algo))

// cuBLASLt (FP8 prefill products): opaque handles and the two structs passed by value, laid out as in
// cublasLt.h.
struct cublasLtContext;
using cublasLtHandle = cublasLtContext*;
struct cublasLtMatmulDescOpaque;
using cublasLtMatmulDesc = cublasLtMatmulDescOpaque*;
struct cublasLtMatrixLayoutOpaque;
using cublasLtMatrixLayout = cublasLtMatrixLayoutOpaque*;
struct cublasLtMatmulPreferenceOpaque;
using cublasLtMatmulPreference = cublasLtMatmulPreferenceOpaque*;
struct cublasLtMatmulAlgo {
  unsigned long long data[8];
};
struct cublasLtMatmulHeuristicResult {
  cublasLtMatmulAlgo algo;
  std::size_t workspace_size;
  cublasStatus state;
  float waves_count;
  int reserved[4];
};
constexpr int kCudaR8FE4M3 = 28;                                  // cudaDataType
constexpr int kLtDescTransA = 3, kLtDescTransB = 4;               // cublasLtMatmulDescAttributes_t
constexpr int kLtDescAScalePointer = 17, kLtDescBScalePointer = 18;
constexpr int kLtDescFastAccum = 25;
constexpr int kLtPrefMaxWorkspaceBytes = 1;                       // cublasLtMatmulPreferenceAttributes_t

#define TRUENO_CUBLASLT_FUNCTIONS(X)                                                                          \
  X(cublasStatus, create, "cublasLtCreate", (cublasLtHandle * handle))                                        \
  X(cublasStatus, destroy, "cublasLtDestroy", (cublasLtHandle handle))                                        \
  X(const char*, status_string, "cublasLtGetStatusString", (cublasStatus s))                                  \
  X(std::size_t, version, "cublasLtGetVersion", ())                                                           \
  X(cublasStatus, desc_create, "cublasLtMatmulDescCreate", (cublasLtMatmulDesc * desc, int compute, int scale_type)) \
  X(cublasStatus, desc_destroy, "cublasLtMatmulDescDestroy", (cublasLtMatmulDesc desc))                       \
  X(cublasStatus, desc_set, "cublasLtMatmulDescSetAttribute",                                                 \
    (cublasLtMatmulDesc desc, int attr, const void* buf, std::size_t bytes))                                  \
  X(cublasStatus, layout_create, "cublasLtMatrixLayoutCreate",                                                \
    (cublasLtMatrixLayout * layout, int type, unsigned long long rows, unsigned long long cols, long long ld))  \
  X(cublasStatus, layout_destroy, "cublasLtMatrixLayoutDestroy", (cublasLtMatrixLayout layout))               \
  X(cublasStatus, pref_create, "cublasLtMatmulPreferenceCreate", (cublasLtMatmulPreference * pref))           \
  X(cublasStatus, pref_destroy, "cublasLtMatmulPreferenceDestroy", (cublasLtMatmulPreference pref))           \
  X(cublasStatus, pref_set, "cublasLtMatmulPreferenceSetAttribute",                                           \
    (cublasLtMatmulPreference pref, int attr, const void* buf, std::size_t bytes))                            \
  X(cublasStatus, heuristic, "cublasLtMatmulAlgoGetHeuristic",                                                \
    (cublasLtHandle handle, cublasLtMatmulDesc desc, cublasLtMatrixLayout a, cublasLtMatrixLayout b,          \
     cublasLtMatrixLayout c, cublasLtMatrixLayout d, cublasLtMatmulPreference pref, int requested,             \
     cublasLtMatmulHeuristicResult* results, int* returned))                                                  \
  X(cublasStatus, matmul, "cublasLtMatmul",                                                                   \
    (cublasLtHandle handle, cublasLtMatmulDesc desc, const void* alpha, const void* a, cublasLtMatrixLayout a_layout, \
     const void* b, cublasLtMatrixLayout b_layout, const void* beta, const void* c, cublasLtMatrixLayout c_layout,     \
     void* d, cublasLtMatrixLayout d_layout, const cublasLtMatmulAlgo* algo, void* workspace, std::size_t workspace_bytes, \
     CUstream stream))

}  // namespace trueno::cuda::api
