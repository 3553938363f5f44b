// Per-device contexts, their memory and kernel modules (context.h).
#include "trueno/cuda/context.h"

#include <cstdio>

#include "core/strings.h"
#include "cuda/kernels.h"
#include "cuda/nvrtc.h"
#include "trueno/log.h"

namespace trueno::cuda {

std::string DeviceInfo::describe() const {
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(total_memory) / (1024.0 * 1024.0 * 1024.0));
  return strcat(name, " (sm_", arch(), ", ", sms, " SMs, ", mem, "), driver ", driver_version / 1000, '.',
                (driver_version % 1000) / 10);
}

int device_count(std::string* why) {
  const Driver* d = driver(why);
  if (d == nullptr) return 0;
  int count = 0;
  if (d->device_count(&count) != api::kSuccess || count == 0) {
    if (why) *why = "no CUDA device (cuDeviceGetCount: 0)";
    return 0;
  }
  return count;
}

std::optional<DeviceInfo> probe(int index, std::string* why) {
  const int count = device_count(why);
  if (count == 0) return std::nullopt;
  if (index < 0 || index >= count) {
    if (why) *why = strcat("no CUDA device ", index, " (this machine has ", count, ")");
    return std::nullopt;
  }
  const Driver* d = driver();
  try {
    DeviceInfo info;
    api::CUdevice dev = 0;
    check(d->device_get(&dev, index), strcat("cuDeviceGet(", index, ")").c_str());
    char name[256] = {};
    check(d->device_name(name, sizeof name - 1, dev), "cuDeviceGetName");
    info.name = name;
    int l2 = 0;
    check(d->device_attribute(&info.cc_major, api::kAttrComputeCapabilityMajor, dev), "cuDeviceGetAttribute(cc major)");
    check(d->device_attribute(&info.cc_minor, api::kAttrComputeCapabilityMinor, dev), "cuDeviceGetAttribute(cc minor)");
    check(d->device_attribute(&info.sms, api::kAttrMultiprocessorCount, dev), "cuDeviceGetAttribute(SM count)");
    check(d->device_attribute(&l2, api::kAttrL2CacheSize, dev), "cuDeviceGetAttribute(L2 size)");
    info.l2_bytes = static_cast<std::size_t>(l2);
    check(d->device_total_mem(&info.total_memory, dev), "cuDeviceTotalMem");
    check(d->driver_version(&info.driver_version), "cuDriverGetVersion");
    return info;
  } catch (const CudaError& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

namespace {

std::string in_parentheses(const std::string& s) { return s.empty() ? "" : strcat(" (", s, ")"); }

// Device dev's kernel path (Note [Kernel path]), with *n the NVRTC it uses (nullptr where there is none) and
// *why NVRTC's absence, or, where there is no path, the device and everything missing.
KernelPath device_kernel_path(const DeviceInfo& dev, const Nvrtc** n, std::string* why) {
  std::string nvrtc_why, path_why;
  *n = nvrtc(&nvrtc_why);
  const KernelPath path = choose_kernel_path(dev.cc_major, *n != nullptr, ptx_embedded(), &path_why);
  *why = path == KernelPath::None ? strcat(dev.describe(), ": ", path_why, in_parentheses(nvrtc_why)) : nvrtc_why;
  return path;
}

}  // namespace

CudaStatus status(int index) {
  std::string why;
  const auto dev = probe(index, &why);
  if (!dev) return {false, why};
  const Nvrtc* n = nullptr;
  switch (device_kernel_path(*dev, &n, &why)) {
    case KernelPath::Nvrtc:
      return {true, strcat(dev->describe(), ", kernels: NVRTC ", n->major, '.', n->minor)};
    case KernelPath::DriverJitPtx:
      return {true, strcat(dev->describe(), ", kernels: embedded PTX through the driver JIT (", why, ")")};
    case KernelPath::None:
      break;
  }
  return {false, why};
}

Context::Context(const Driver& drv, int index, DeviceInfo info) : drv_(&drv), index_(index), info_(std::move(info)) {
  check(drv_->device_get(&dev_, index), strcat("cuDeviceGet(", index, ")").c_str());
  check(drv_->primary_ctx_retain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  make_current();
  check(drv_->stream_create(&stream_, api::kStreamNonBlocking), "cuStreamCreate");
  log(LogLevel::Info, strcat("CUDA device ", index, ": ", info_.describe()));
}

std::shared_ptr<Context> Context::open(int index) {
  std::string why;
  const auto info = probe(index, &why);
  if (!info) throw BackendUnavailable(strcat("cuda:", index, ": unavailable: ", why));
  const Nvrtc* n = nullptr;
  if (device_kernel_path(*info, &n, &why) == KernelPath::None) throw BackendUnavailable(strcat("cuda:", index, ": unavailable: ", why));
  try {
    return std::shared_ptr<Context>(new Context(*cuda::driver(), index, *info));
  } catch (const CudaError& e) {
    throw BackendUnavailable(strcat("cuda:", index, ": unavailable: ", e.what()));
  }
}

Context::~Context() {
  // The op families' state and the cuBLAS workspace hold device memory of this context: freed first.
  extensions_.clear();
  if (cublas_ != nullptr) {
    make_current();
    cublas()->destroy(cublas_);
  }
  cublas_workspace_.reset();
  make_current();
  for (auto& [name, mod] : modules_) drv_->module_unload(mod);
  if (stream_ != nullptr) drv_->stream_destroy(stream_);
  drv_->primary_ctx_release(dev_);
}

void Context::make_current() const { check(drv_->ctx_set_current(ctx_), "cuCtxSetCurrent"); }

void Context::synchronize() const { check(drv_->stream_synchronize(stream_), "cuStreamSynchronize"); }

api::CUfunction Context::function(const char* module, const char* name) {
  std::lock_guard lock(mu_);
  const auto key = std::make_pair(module, name);
  if (auto f = functions_.find(key); f != functions_.end() && f->second.module == module && f->second.name == name) return f->second.f;
  make_current();
  auto it = modules_.find(module);
  if (it == modules_.end()) {
    // Note [Kernel path]: NVRTC compiles for this exact sm_XX (cached, nvrtc.h); without it, the PTX nvcc
    // embedded at build time goes through the driver's JIT, except on compute capability >= 12, where that
    // JIT is known to miscompile valid kernels: there NVRTC is required.
    const KernelSource& src = kernel_source(module);
    std::string nvrtc_why, why;
    const bool have_nvrtc = nvrtc(&nvrtc_why) != nullptr;
    api::CUmodule mod = nullptr;
    switch (choose_kernel_path(info_.cc_major, have_nvrtc, src.ptx != nullptr, &why)) {
      case KernelPath::Nvrtc: {
        const Cubin cubin = compile_cubin(src.module, src.source, info_.arch(), info_.driver_version, default_cache_dir());
        check(drv_->module_load_data(&mod, cubin.image.data()), strcat("cuModuleLoadData(", module, ")").c_str());
        break;
      }
      case KernelPath::DriverJitPtx:
        log(LogLevel::Warn, strcat("CUDA module ", module, ": PTX through the driver JIT (", nvrtc_why, ")"));
        check(drv_->module_load_data(&mod, src.ptx), strcat("cuModuleLoadData(", module, " PTX, driver JIT)").c_str());
        break;
      case KernelPath::None:
        throw CudaError(strcat("CUDA module ", module, ": ", why, in_parentheses(nvrtc_why)), -1);
    }
    it = modules_.emplace(module, mod).first;
  }
  api::CUfunction f = nullptr;
  check(drv_->module_get_function(&f, it->second, name), strcat("cuModuleGetFunction(", module, ".", name, ")").c_str());
  functions_[key] = {f, module, name};  // a reused name buffer's entry is replaced (the module's handle is the same)
  return f;
}

api::cublasHandle Context::cublas_handle() {
  std::lock_guard lock(mu_);
  if (cublas_ == nullptr) {
    std::string why;
    const Cublas* b = cublas(&why);
    if (b == nullptr) throw CudaError(strcat("cuBLAS is needed for prefill GEMMs: ", why), -1);
    make_current();
    check_cublas(b->create(&cublas_), "cublasCreate");
    check_cublas(b->set_stream(cublas_, stream_), "cublasSetStream");
    // A workspace of our own: cuBLAS then allocates nothing while a CUDA graph is being captured
    // (the cublas-f16 decode mode captures its GEMVs). 32 MiB is NVIDIA's recommendation for Hopper.
    cublas_workspace_ = std::make_unique<DeviceBuffer>(*this, std::size_t{32} << 20);
    check_cublas(b->set_workspace(cublas_, reinterpret_cast<void*>(cublas_workspace_->ptr()), cublas_workspace_->bytes()),
                 "cublasSetWorkspace");
  }
  return cublas_;
}

void launch(Context& c, api::CUfunction f, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
            void** params, unsigned shared_bytes) {
  check(c.driver().launch_kernel(f, grid_x, grid_y, 1, block_x, block_y, 1, shared_bytes, c.stream(), params, nullptr),
        "cuLaunchKernel");
}

bool overlapped_launches(const Context& c) {
  static const bool env_on = [] {
    const char* e = std::getenv("TRUENO_CUDA_PDL");
    return e == nullptr || std::string_view(e) != "0";
  }();
  return env_on && c.info().cc_major >= 9;
}

void launch_overlapped(Context& c, api::CUfunction f, unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y,
                       void** params, unsigned shared_bytes) {
  if (!overlapped_launches(c)) return launch(c, f, grid_x, grid_y, block_x, block_y, params, shared_bytes);
  api::CUlaunchAttribute attr{};
  attr.id = api::kLaunchAttrProgrammaticStreamSerialization;
  attr.value.i = 1;
  const api::CUlaunchConfig config{grid_x, grid_y, 1, block_x, block_y, 1, shared_bytes, c.stream(), &attr, 1};
  check(c.driver().launch_kernel_ex(&config, f, params, nullptr), "cuLaunchKernelEx(programmatic stream serialization)");
}

DeviceBuffer::DeviceBuffer(Context& ctx, std::size_t bytes) : c_(&ctx), bytes_(bytes) {
  if (bytes == 0) return;
  const Context& c = ctx;
  c.make_current();
  const api::CUresult r = c.driver().mem_alloc(&ptr_, bytes);
  if (r == api::kSuccess) return;
  std::size_t free = 0, total = 0;
  c.driver().mem_get_info(&free, &total);
  constexpr double MiB = 1024.0 * 1024.0;
  char msg[160];
  std::snprintf(msg, sizeof msg, "cuMemAlloc(%.1f MiB) on %s: %.1f MiB free of %.1f MiB", bytes / MiB, c.info().name.c_str(),
                free / MiB, total / MiB);
  check(r, msg);
}

void DeviceBuffer::release() noexcept {
  if (ptr_ != 0) {
    c_->make_current();
    c_->driver().mem_free(ptr_);
  }
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    c_ = o.c_, ptr_ = o.ptr_, bytes_ = o.bytes_;
    o.ptr_ = 0, o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > bytes_) throw InvalidArgument(strcat("DeviceBuffer::upload: ", bytes, " bytes at ", offset, " exceed ", bytes_));
  if (bytes == 0) return;
  const Context& c = *c_;
  c.make_current();
  // On the context's stream, then waited for: the plain cuMemcpyHtoD runs on the legacy stream, which does
  // not order with our non-blocking one, and returns before its DMA from pageable memory completes - a
  // kernel launched next (the f16/FP8 weight conversions at load) could read the buffer half written.
  check(c.driver().memcpy_htod_async(ptr_ + offset, src, bytes, c.stream()), "cuMemcpyHtoDAsync");
  c.synchronize();
}

void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > bytes_) throw InvalidArgument(strcat("DeviceBuffer::download: ", bytes, " bytes at ", offset, " exceed ", bytes_));
  if (bytes == 0) return;
  const Context& c = *c_;
  c.make_current();
  check(c.driver().memcpy_dtoh_async(dst, ptr_ + offset, bytes, c.stream()), "cuMemcpyDtoHAsync");  // after the stream's work
  c.synchronize();
}

}  // namespace trueno::cuda

namespace trueno::cuda {

PinnedBuffer::PinnedBuffer(Context& ctx, std::size_t bytes) : c_(&ctx), bytes_(bytes) {
  const Context& c = ctx;
  c.make_current();
  check(c.driver().mem_alloc_host(&p_, bytes), strcat("cuMemAllocHost(", bytes, " bytes)").c_str());
}

PinnedBuffer::~PinnedBuffer() {
  if (p_ != nullptr) c_->driver().mem_free_host(p_);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (p_ != nullptr) c_->driver().mem_free_host(p_);
    c_ = o.c_, p_ = o.p_, bytes_ = o.bytes_;
    o.p_ = nullptr, o.bytes_ = 0;
  }
  return *this;
}

Graph::~Graph() {
  if (exec_ != nullptr) c_->driver().graph_exec_destroy(exec_);
  if (graph_ != nullptr) c_->driver().graph_destroy(graph_);
}

void Graph::begin(Context& c) {
  c_ = &c;
  check(c.driver().stream_begin_capture(c.stream(), api::kStreamCaptureModeThreadLocal), "cuStreamBeginCapture");
}

void Graph::end(Context& c) {
  check(c.driver().stream_end_capture(c.stream(), &graph_), "cuStreamEndCapture");
  check(c.driver().graph_instantiate(&exec_, graph_, 0), "cuGraphInstantiateWithFlags");
}

void Graph::launch(Context& c) const { check(c.driver().graph_launch(exec_, c.stream()), "cuGraphLaunch"); }

}  // namespace trueno::cuda
