// NCCL, loaded at run time like the driver (loader.h): libnccl.so.2 on the library path, or the file
// TRUENO_NCCL names (on the GPU machines it ships inside the Python package nvidia-nccl-cu13:
// TRUENO_NCCL=.../site-packages/nvidia/nccl/lib/libnccl.so.2). Nothing links NCCL and no NCCL header is
// needed (Debian has none): the few entry points are declared here from NCCL's public C API.
//
// Note [NCCL ABI]
// Declared from NCCL's documented API (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html:
// "Communicator Creation and Management Functions", "Collective Communication Functions", "Group
// Calls", "Types"): ncclComm_t is an opaque pointer; ncclUniqueId is a struct of NCCL_UNIQUE_ID_BYTES
// (128) chars passed *by value* to ncclCommInitRank; ncclResult_t, ncclDataType_t and ncclRedOp_t are
// C enums (int-sized): ncclSuccess = 0, ncclFloat32 = 7, ncclSum = 0; cudaStream_t is the driver's
// CUstream. These values have been stable since NCCL 2.0; ncclGetVersion's code (major*10000 +
// minor*100 + patch since 2.9) is checked to be >= 2.x at load.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "trueno/comm.h"
#include "trueno/cuda/driver_api.h"

namespace trueno::cuda {

namespace nccl_api {
struct ncclComm;
using ncclComm_t = ncclComm*;
constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct ncclUniqueId {
  char internal[kUniqueIdBytes];
};
using ncclResult_t = int;    // enum: ncclSuccess = 0, ncclUnhandledCudaError, ncclSystemError, ...
using ncclDataType_t = int;  // enum
using ncclRedOp_t = int;     // enum
constexpr ncclResult_t kSuccess = 0;
constexpr ncclDataType_t kFloat32 = 7;  // ncclFloat32 (== ncclFloat)
constexpr ncclRedOp_t kSum = 0;         // ncclSum
}  // namespace nccl_api

// X(return type, member, symbol, parameters): every entry point trueno uses.
#define TRUENO_NCCL_FUNCTIONS(X)                                                                                    \
  X(nccl_api::ncclResult_t, get_version, "ncclGetVersion", (int* version))                                          \
  X(nccl_api::ncclResult_t, get_unique_id, "ncclGetUniqueId", (nccl_api::ncclUniqueId * id))                        \
  X(nccl_api::ncclResult_t, comm_init_rank, "ncclCommInitRank",                                                     \
    (nccl_api::ncclComm_t * comm, int n_ranks, nccl_api::ncclUniqueId id, int rank))                                \
  X(nccl_api::ncclResult_t, all_reduce, "ncclAllReduce",                                                            \
    (const void* send, void* recv, std::size_t count, nccl_api::ncclDataType_t type, nccl_api::ncclRedOp_t op,      \
     nccl_api::ncclComm_t comm, api::CUstream stream))                                                              \
  X(nccl_api::ncclResult_t, all_gather, "ncclAllGather",                                                            \
    (const void* send, void* recv, std::size_t send_count, nccl_api::ncclDataType_t type, nccl_api::ncclComm_t comm, \
     api::CUstream stream))                                                                                         \
  X(nccl_api::ncclResult_t, group_start, "ncclGroupStart", ())                                                      \
  X(nccl_api::ncclResult_t, group_end, "ncclGroupEnd", ())                                                          \
  X(nccl_api::ncclResult_t, comm_destroy, "ncclCommDestroy", (nccl_api::ncclComm_t comm))                           \
  X(nccl_api::ncclResult_t, comm_abort, "ncclCommAbort", (nccl_api::ncclComm_t comm))                               \
  X(const char*, error_string, "ncclGetErrorString", (nccl_api::ncclResult_t result))

struct Nccl {
#define TRUENO_MEMBER(ret, member, symbol, params) ret(*member) params = nullptr;
  TRUENO_NCCL_FUNCTIONS(TRUENO_MEMBER)
#undef TRUENO_MEMBER
  std::string library;  // the file that was loaded
  int major = 0, minor = 0, patch = 0;
};

// NCCL, or nullptr with *why ("NCCL not found (tried libnccl.so.2; set TRUENO_NCCL=/path/to/libnccl.so.2)",
// "... lacks ncclAllGather"). Loading needs no GPU; a communicator does.
const Nccl* nccl(std::string* why = nullptr);
// The loader's verdict as a status line (trueno::multi_device_status() in CUDA builds).
CollectiveStatus nccl_status();
// Throws CudaError "<call>: <ncclGetErrorString> (code)" unless r is ncclSuccess.
void check_nccl(nccl_api::ncclResult_t r, const char* call);

// The id rank 0 makes (ncclGetUniqueId) and every rank passes to NcclCommunicator: across processes it
// travels through the TCP bootstrap (trueno/comm.h) as its 128 bytes.
using NcclId = std::array<std::byte, nccl_api::kUniqueIdBytes>;
NcclId nccl_unique_id();

// One rank of an NCCL group, on the CUDA context current on the constructing thread (that rank's GPU)
// and enqueuing on `stream`: the collectives are asynchronous on the stream (captured into a CUDA graph
// like the kernels around them) and their buffers are device pointers cast to float*. The constructor
// blocks until all n_ranks ranks have joined (ncclCommInitRank), so the ranks of one process construct
// theirs from different threads.
class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const NcclId& id, int rank, int n_ranks, api::CUstream stream);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return n_ranks_; }
  void all_reduce_sum(float* data, std::size_t n) override;
  void all_gather(const float* in, float* out, std::size_t n) override;
  void abort() override;
  std::string name() const override { return "nccl"; }

 private:
  const Nccl* n_;
  nccl_api::ncclComm_t comm_ = nullptr;
  int rank_, n_ranks_;
  api::CUstream stream_;
};

// One process per GPU (on one host or several): rank 0 makes the id, the TCP bootstrap (Note [TCP
// bootstrap], trueno/comm.h) hands it to the other ranks, and each joins the group on `stream` (its
// device's context current on the calling thread).
std::unique_ptr<NcclCommunicator> nccl_join(const BootstrapOptions& o, api::CUstream stream);

}  // namespace trueno::cuda
