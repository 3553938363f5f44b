// NCCL through dlopen (Note [NCCL ABI], nccl.h) and the NCCL communicator.
#include "trueno/cuda/nccl.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/strings.h"
#include "trueno/cuda/loader.h"
#include "trueno/error.h"

namespace trueno::cuda {
namespace {

struct LoadedNccl {
  Nccl table;
  bool ok = false;
  std::string why;
};

// TRUENO_NCCL when set (only that file: a wrong path is reported, not silently replaced), else the
// soname on the library path.
std::vector<std::string> candidates() {
  if (const char* p = std::getenv("TRUENO_NCCL"); p != nullptr && *p != '\0') return {p};
  return {"libnccl.so.2", "libnccl.so"};
}

void load(LoadedNccl& l) {
  void* lib = nullptr;
  std::string tried;
  for (const auto& c : candidates()) {
    if ((lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) {
      l.table.library = c;
      break;
    }
    const char* e = dlerror();
    tried += strcat(tried.empty() ? "" : "; ", e ? e : c.c_str());
  }
  if (lib == nullptr) {
    l.why = strcat("NCCL not found (", tried, "); install libnccl2 or pip's nvidia-nccl-cu13 and set TRUENO_NCCL=/path/to/libnccl.so.2");
    return;
  }
  std::string missing;
#define TRUENO_RESOLVE(ret, member, sym, params)                                  \
  l.table.member = reinterpret_cast<decltype(l.table.member)>(dlsym(lib, sym));   \
  if (l.table.member == nullptr) missing += strcat(missing.empty() ? "" : ", ", sym);
  TRUENO_NCCL_FUNCTIONS(TRUENO_RESOLVE)
#undef TRUENO_RESOLVE
  if (!missing.empty()) {
    l.why = strcat(l.table.library, " lacks ", missing, " (not NCCL 2?)");
    return;
  }
  int code = 0;
  if (l.table.get_version(&code) != nccl_api::kSuccess || code < 2000) {
    l.why = strcat(l.table.library, ": ncclGetVersion gave ", code, ", expected NCCL 2.x");
    return;
  }
  // NCCL_VERSION_CODE: major*1000 + minor*100 + patch up to 2.8, major*10000 + minor*100 + patch since 2.9.
  const int major_div = code >= 10000 ? 10000 : 1000;
  l.table.major = code / major_div, l.table.minor = code % major_div / 100, l.table.patch = code % 100;
  l.ok = true;
}

LoadedNccl& loaded() {
  static LoadedNccl l;
  static std::once_flag once;
  std::call_once(once, [] { load(l); });
  return l;
}

}  // namespace

const Nccl* nccl(std::string* why) {
  LoadedNccl& l = loaded();
  if (!l.ok && why != nullptr) *why = l.why;
  return l.ok ? &l.table : nullptr;
}

CollectiveStatus nccl_status() {
  std::string why;
  const Nccl* n = nccl(&why);
  if (n == nullptr) return {false, why};
  return {true, strcat("NCCL ", n->major, ".", n->minor, ".", n->patch, " (", n->library, ")")};
}

void check_nccl(nccl_api::ncclResult_t r, const char* call) {
  if (r == nccl_api::kSuccess) return;
  const Nccl* n = nccl();
  throw CudaError(strcat(call, ": ", n ? n->error_string(r) : "NCCL error", " (ncclResult_t ", r, ")"), r);
}

namespace {

const Nccl& need_nccl(const char* what) {
  std::string why;
  const Nccl* n = nccl(&why);
  if (n == nullptr) throw BackendUnavailable(strcat(what, ": ", why));
  return *n;
}

}  // namespace

NcclId nccl_unique_id() {
  const Nccl& n = need_nccl("nccl_unique_id");
  nccl_api::ncclUniqueId id;
  check_nccl(n.get_unique_id(&id), "ncclGetUniqueId");
  NcclId out;
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

NcclCommunicator::NcclCommunicator(const NcclId& id, int rank, int n_ranks, api::CUstream stream)
    : n_(&need_nccl("NcclCommunicator")), rank_(rank), n_ranks_(n_ranks), stream_(stream) {
  if (n_ranks < 1 || rank < 0 || rank >= n_ranks)
    throw InvalidArgument(strcat("NcclCommunicator: rank ", rank, " of ", n_ranks, " is out of range"));
  nccl_api::ncclUniqueId uid;
  std::memcpy(uid.internal, id.data(), id.size());
  check_nccl(n_->comm_init_rank(&comm_, n_ranks, uid, rank), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) n_->comm_destroy(comm_);  // no throw from a destructor: the result is dropped
}

void NcclCommunicator::all_reduce_sum(float* data, std::size_t n) {
  check_nccl(n_->all_reduce(data, data, n, nccl_api::kFloat32, nccl_api::kSum, comm_, stream_), "ncclAllReduce");
}

void NcclCommunicator::all_gather(const float* in, float* out, std::size_t n) {
  check_nccl(n_->all_gather(in, out, n, nccl_api::kFloat32, comm_, stream_), "ncclAllGather");
}

void NcclCommunicator::abort() {
  if (comm_ == nullptr) return;
  n_->comm_abort(comm_);
  comm_ = nullptr;
}

std::unique_ptr<NcclCommunicator> nccl_join(const BootstrapOptions& o, api::CUstream stream) {
  std::vector<std::byte> id;
  if (o.rank == 0) {
    const NcclId made = nccl_unique_id();
    id.assign(made.begin(), made.end());
  }
  id = bootstrap_broadcast(o, id);
  if (id.size() != nccl_api::kUniqueIdBytes)
    throw Error(strcat("nccl_join: rank ", o.rank, " received ", id.size(), " bytes from rank 0, not an NCCL id (", nccl_api::kUniqueIdBytes, ")"));
  NcclId nid;
  std::memcpy(nid.data(), id.data(), nid.size());
  return std::make_unique<NcclCommunicator>(nid, o.rank, o.world_size, stream);
}

}  // namespace trueno::cuda
