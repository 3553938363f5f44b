// The CUDA device trueno runs on (device 0): its properties, its primary context, one stream, device
// memory, and the embedded kernel modules, compiled by NVRTC (or loaded from the cubin cache) on first use.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cuda/loader.h"

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

// Device 0, or nullopt with *why naming what is missing (driver, device).
std::optional<DeviceInfo> probe(std::string* why = nullptr);

// The CUDA line of the backend report: usable (a device, and a way to build kernels for it), and the
// device and kernel path, or why not ("no NVIDIA driver: ...", "NVRTC is required on ...").
struct CudaStatus {
  bool available;
  std::string text;
};
CudaStatus status();

// Device memory, freed on destruction. An allocation that does not fit throws CudaError naming the
// request and the device's free and total memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  api::CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;

 private:
  api::CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Context;

// Page-locked host memory (cuMemAllocHost), for asynchronous copies to the device.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  void* data() const { return p_; }
  std::size_t bytes() const { return bytes_; }

 private:
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
  api::CUgraph graph_ = nullptr;
  api::CUgraphExec exec_ = nullptr;
};

class Context {
 public:
  // The process's context on device 0; throws BackendUnavailable with the reason when there is none.
  static Context& get();

  const DeviceInfo& info() const { return info_; }
  const Driver& driver() const { return *drv_; }
  api::CUstream stream() const { return stream_; }
  // Makes the context current on the calling thread (every entry point that launches calls it).
  void make_current() const;
  void synchronize() const;
  // Kernel `name` of embedded module `module`, compiled for this device on first use.
  api::CUfunction function(const char* module, const char* name);
  // A cuBLAS handle bound to the stream, created on first use (CudaError when cuBLAS is missing).
  api::cublasHandle cublas_handle();

 private:
  Context(const Driver& drv, DeviceInfo info);
  const Driver* drv_;
  DeviceInfo info_;
  api::CUdevice dev_ = 0;
  api::CUcontext ctx_ = nullptr;
  api::CUstream stream_ = nullptr;
  std::mutex mu_;
  std::map<std::string, api::CUmodule, std::less<>> modules_;
  api::cublasHandle cublas_ = nullptr;
  DeviceBuffer cublas_workspace_;
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
