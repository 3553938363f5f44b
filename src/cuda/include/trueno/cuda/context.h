// A CUDA device as trueno uses it: its properties, an explicit per-device Context (the device's primary
// context, one stream, the embedded kernel modules compiled by NVRTC or loaded from the cubin cache on
// first use, and their function handles), and memory that belongs to a context. Nothing here is a
// process-wide singleton except the loaded driver libraries (loader.h): two contexts on two devices, or
// two on one, are independent.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "trueno/cuda/loader.h"

namespace trueno::cuda {

struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  std::size_t total_memory = 0, l2_bytes = 0;
  int driver_version = 0;  // e.g. 13000 for 13.0
  int arch() const { return cc_major * 10 + cc_minor; }
  // "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB), driver 13.0"
  std::string describe() const;
};

// The number of CUDA devices (0 with *why when there is no driver or none).
int device_count(std::string* why = nullptr);
// Device `index`, or nullopt with *why naming what is missing (driver, device).
std::optional<DeviceInfo> probe(int index = 0, std::string* why = nullptr);

// One device's line of the backend report: usable (a device, and a way to build kernels for it), and the
// device and kernel path, or why not ("no NVIDIA driver: ...", "NVRTC is required on ...").
struct CudaStatus {
  bool available;
  std::string text;
};
CudaStatus status(int index = 0);

// What identifies the kernels' machine code apart from the device: a hash of every embedded source and
// the compile options (tuning defines included), as hex. Part of the parity gate's verdict cache key.
std::string kernels_identity();

class Context;

// Memory of one context's device, freed on destruction (the context must outlive it). An allocation that
// does not fit throws CudaError naming the request and the device's free and total memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Context& c, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : c_(o.c_), ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  api::CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  Context* context() const { return c_; }

 private:
  void release() noexcept;
  Context* c_ = nullptr;
  api::CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cuMemAllocHost) for a context's asynchronous copies.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(Context& c, std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  void* data() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
  Context* c_ = nullptr;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// A CUDA graph captured from the context's stream: capture() records the launches fn makes, launch()
// replays them on the stream (one call instead of one per kernel).
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  template <class Fn>
  void capture(Context& c, Fn&& fn);
  void launch(Context& c) const;
  bool ready() const { return exec_ != nullptr; }

 private:
  void begin(Context& c);
  void end(Context& c);
  Context* c_ = nullptr;
  api::CUgraph graph_ = nullptr;
  api::CUgraphExec exec_ = nullptr;
};

class Context {
 public:
  // A new context on device `index`: the device's primary context (retained), a stream of its own, its own
  // modules and function handles. Throws BackendUnavailable naming the device and the reason.
  static std::shared_ptr<Context> open(int index = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int index() const { return index_; }
  const DeviceInfo& info() const { return info_; }
  const Driver& driver() const { return *drv_; }
  api::CUstream stream() const { return stream_; }
  // Makes the context current on the calling thread (every entry point that launches calls it).
  void make_current() const;
  void synchronize() const;
  // Kernel `name` of embedded module `module`, compiled for this device on first use; the handle is
  // cached per context. The cache is looked up by the two pointers first (decode launches pass literals)
  // and the names are compared before a hit is trusted: a buffer reused for another name is not a hit.
  api::CUfunction function(const char* module, const char* name);
  // A cuBLAS handle bound to the stream, created on first use (CudaError when cuBLAS is missing).
  api::cublasHandle cublas_handle();
  // Per-context state of an op family (cuBLASLt plans, ...): T(Context&) made on first use, destroyed
  // with the context.
  template <class T>
  T& extension() {
    std::lock_guard lock(mu_);
    std::shared_ptr<void>& p = extensions_[std::type_index(typeid(T))];
    if (!p) p = std::make_shared<T>(*this);
    return *static_cast<T*>(p.get());
  }

 private:
  Context(const Driver& drv, int index, DeviceInfo info);
  struct PairHash {
    std::size_t operator()(const std::pair<const char*, const char*>& p) const noexcept {
      return std::hash<const void*>{}(p.first) * 31 + std::hash<const void*>{}(p.second);
    }
  };
  const Driver* drv_;
  int index_;
  DeviceInfo info_;
  api::CUdevice dev_ = 0;
  api::CUcontext ctx_ = nullptr;
  api::CUstream stream_ = nullptr;
  std::mutex mu_;
  std::map<std::string, api::CUmodule, std::less<>> modules_;
  struct CachedFunction {
    api::CUfunction f;
    std::string module, name;
  };
  std::unordered_map<std::pair<const char*, const char*>, CachedFunction, PairHash> functions_;
  api::cublasHandle cublas_ = nullptr;
  std::unique_ptr<DeviceBuffer> cublas_workspace_;
  std::map<std::type_index, std::shared_ptr<void>> extensions_;
};

template <class Fn>
void Graph::capture(Context& c, Fn&& fn) {
  begin(c);
  try {
    fn();
  } catch (...) {
    api::CUgraph g = nullptr;
    c.driver().stream_end_capture(c.stream(), &g);
    if (g != nullptr) c.driver().graph_destroy(g);
    throw;
  }
  end(c);
}

// Launches f on the context's stream (grid and block as x, y; params as for cuLaunchKernel).
void launch(Context& c, api::CUfunction f, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            void** params, unsigned shared_bytes = 0);

// Note [Overlapped launches]
// Decode runs ~350 small kernels per token, and each boundary costs a few microseconds of launch and
// ramp-up. On compute capability >= 9.0 the decode kernels are launched with programmatic stream
// serialization: the next kernel's blocks may be scheduled once every block of the running one has
// started, and they wait in overlap_prologue() (kernels/prelude.cuh: griddepcontrol.wait, which returns
// when the previous grid has completed and its writes are visible) before touching memory. Only kernels
// that begin with overlap_prologue() may be launched this way (a test checks the modules that are).
// TRUENO_CUDA_PDL=0 turns it off.
void launch_overlapped(Context& c, api::CUfunction f, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
                       void** params, unsigned shared_bytes = 0);
// Whether launch_overlapped overlaps (compute capability >= 9.0 and TRUENO_CUDA_PDL is not 0).
bool overlapped_launches(const Context& c);

}  // namespace trueno::cuda
