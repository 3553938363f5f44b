// A Vulkan device as trueno uses it: what it is (DeviceInfo), an explicit per-device Context (a VkDevice,
// one compute queue, a command pool, its own pipelines built from the embedded SPIR-V, and a pipeline
// cache on disk), memory that belongs to a context (Buffer), and a command recording helper (Recorder).
// Process-wide: only the loaded loader and its VkInstance (loader.h). Two contexts on one device, or on
// two, are independent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trueno/vulkan/loader.h"

namespace trueno::vulkan {

struct MemoryHeap {
  std::uint64_t bytes = 0;
  bool device_local = false;
};

struct DeviceInfo {
  std::string name;    // "llvmpipe (LLVM 15.0.6, 256 bits)", "NVIDIA GeForce RTX 4090"
  std::string driver;  // "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)", or the driver version number without 1.2
  std::string type;    // "discrete", "integrated", "virtual", "cpu", "other"
  // A CPU implementation (lavapipe, SwiftShader): reported and usable when forced (--backend vulkan:N, the
  // tests), never chosen automatically (DeviceStatus::automatic).
  bool cpu = false;
  std::uint32_t api_version = 0, driver_version = 0, vendor_id = 0, device_id = 0;
  std::uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;  // subgroupAdd in compute shaders (else the shared-memory reductions)
  bool storage_16bit = false;        // storageBuffer16BitAccess
  bool storage_8bit = false;         // storageBuffer8BitAccess (Vulkan 1.2; enabled on the VkDevice when present)
  bool int64 = false;                // shaderInt64 (enabled on the VkDevice when present)
  bool float64 = false;              // shaderFloat64 (enabled on the VkDevice when present)
  bool float_atomics = false;        // VK_EXT_shader_atomic_float: f32 add and exchange on buffers and shared (enabled when present)
  bool float16 = false;              // shaderFloat16
  bool integer_dot_product = false;  // VK_KHR_shader_integer_dot_product (or 1.3) and its feature
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix (or VK_NV_cooperative_matrix) advertised
  // VK_NV_cooperative_matrix with its feature and shaderFloat16, and the N of its f16 x f16 -> f32
  // subgroup shape 16 x N x 16 (16 or 8; 0: none): what the prefill GEMM's tensor-core path needs
  // (Note [Vulkan prefill GEMM], ops.cpp).
  bool nv_cooperative_matrix = false;
  std::uint32_t coopmat_n = 0;
  std::string coopmat_shapes;  // "16x8x16 16x16x16" (f16 inputs, f32 accumulators)
  std::uint64_t max_storage_buffer_range = 0;
  std::uint32_t max_workgroup_invocations = 0, max_push_constants = 0;
  std::uint32_t max_workgroup_count_x = 0, max_workgroup_count_y = 0;  // maxComputeWorkGroupCount[0], [1] (at least 65535)
  std::uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  std::vector<MemoryHeap> heaps;
  // "llvmpipe (LLVM 15.0.6, 256 bits) (cpu, Vulkan 1.3.230, driver ..., subgroup 8 with arithmetic, 16-bit
  // storage yes, float16 yes, integer dot product yes, cooperative matrix no, max storage buffer 2 GiB,
  // heaps 15.6 GiB device-local)"
  std::string describe() const;
};

// The number of Vulkan physical devices (0 with *why when there is no loader, no driver or no device).
int device_count(std::string* why = nullptr);
// Physical device `index` (in the loader's order), or nullopt with *why.
std::optional<DeviceInfo> probe(int index = 0, std::string* why = nullptr);

// What identifies the shaders' machine code apart from the device: a hash of every embedded SPIR-V
// module, as hex.
std::string shaders_identity();

// The pipeline cache's folder: TRUENO_VULKAN_CACHE ("off": none), else $XDG_CACHE_HOME/trueno/vulkan,
// else $HOME/.cache/trueno/vulkan (Note [Vulkan pipeline cache], pipeline_cache.cpp).
std::string default_cache_dir();

class Context;

// Storage memory of one context's device (the context must outlive it). Device-local memory that the host
// can map when the device has enough of it (integrated GPUs, CPU devices like lavapipe, resizable BAR),
// else device-local memory with transfers through a staging buffer (TRUENO_VULKAN_STAGING=1 forces the
// staging path, for tests). A size above maxStorageBufferRange is refused by name. The VkBuffer is rounded
// up to whole 32-bit words (the shaders read words); bytes() is the size asked for.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& c, std::size_t bytes);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  std::size_t bytes() const { return bytes_; }
  bool host_visible() const { return mapped_ != nullptr; }
  // Blocking copies (a staging transfer waits for the queue).
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  Context* context() const { return c_; }
  // Host-visible memory for copies to and from device buffers (Recorder::copy), not bound by shaders:
  // data() is its mapping.
  static Buffer transfer(Context& c, std::size_t bytes);
  void* data() const { return mapped_; }

 private:
  void release() noexcept;
  Context* c_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  std::size_t bytes_ = 0;
  bool uncached_ = false;  // mapped, but not host-cached (a BAR window): large reads go through staging
};

// A compute pipeline of one embedded shader with fixed specialization constants: `buffers` storage
// buffers at bindings 0.., `push_bytes` of push constants.
struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  std::uint32_t buffers = 0, push_bytes = 0;
  std::string name;  // "gemv_subgroup[256,3,1,4]": module and specialization constants
};

// Records dispatches into one command buffer and submits them: every dispatch is followed by a barrier
// (compute writes visible to the next dispatch and to transfers), submit() waits for the queue and
// makes the writes visible to the host. A Recorder can record again after submit().
// Replay (as a CUDA graph): seal() ends a recording, replay() submits it and waits, as often as wanted,
// with whatever the bound buffers hold then; reset() drops it.
class Recorder {
 public:
  explicit Recorder(Context& c);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push, std::size_t push_bytes,
                std::uint32_t groups_x, std::uint32_t groups_y = 1, std::uint32_t groups_z = 1);
  // The same with the bindings counted at run time (e.g. a table of test cases).
  void dispatch_buffers(const Pipeline& p, std::span<const Buffer* const> buffers, const void* push, std::size_t push_bytes,
                        std::uint32_t groups_x, std::uint32_t groups_y = 1, std::uint32_t groups_z = 1);
  template <class Push>
  void dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers, const Push& push, std::uint32_t groups_x,
                std::uint32_t groups_y = 1) {
    dispatch(p, buffers, &push, sizeof push, groups_x, groups_y);
  }
  // Dispatches recorded between begin_concurrent() and end_concurrent() get no barrier between them (they
  // must not read what another of them writes); end_concurrent() records the one barrier after them all.
  void begin_concurrent() { concurrent_ = true; }
  void end_concurrent();
  // vkCmdFillBuffer of the whole buffer with a 32-bit pattern.
  void fill(Buffer& b, std::uint32_t value);
  // vkCmdCopyBuffer of `bytes` (followed by a barrier like a dispatch).
  void copy(VkBuffer src, VkBuffer dst, std::size_t bytes, std::size_t src_offset = 0, std::size_t dst_offset = 0);
  // Ends, submits, waits for completion; throws VulkanError naming the call on a failure.
  void submit();
  void seal();
  void replay();
  void reset();
  bool sealed() const { return sealed_; }
  std::size_t recorded() const { return dispatches_; }
  Context& context() const { return *c_; }

 private:
  void begin();
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
  Context* c_;
  VkCommandPool pool_ = VK_NULL_HANDLE;  // the recorder's own: recorders on several threads need no lock
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools_;
  std::size_t pool_used_ = 0, dispatches_ = 0;
  bool recording_ = false, sealed_ = false, concurrent_ = false, pending_barrier_ = false;
  void run();
};

class Context {
 public:
  // A new context on physical device `index`: its own VkDevice, compute queue, command pool, pipelines and
  // pipeline cache. A CPU device is opened like any other (only automatic selection skips it). Throws
  // BackendUnavailable naming the device and the reason.
  static std::shared_ptr<Context> open(int index = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int index() const { return index_; }
  const DeviceInfo& info() const { return info_; }
  const Api& vk() const { return *api_; }
  VkDevice device() const { return device_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkQueue queue() const { return queue_; }
  std::uint32_t queue_family() const { return queue_family_; }
  // Held around vkQueueSubmit (a VkQueue needs external synchronization).
  std::mutex& queue_mutex() { return queue_mu_; }

  // The pipeline of embedded module `module` with specialization constants spec (constant_id 0, 1, ...),
  // built on first use (through the pipeline cache) and kept by the context.
  const Pipeline& pipeline(const char* module, std::uint32_t buffers, std::uint32_t push_bytes,
                           std::span<const std::uint32_t> spec = {});
  // The pipeline of a SPIR-V module given by the caller (decy's translated kernels, docs/DECY.md): entry
  // point "main", `buffers` storage buffers at bindings 0.. of set 0, `push_bytes` of push constants,
  // specialization constants spec (constant_id 0, 1, ...). Kept by the context under `name`, the words'
  // hash and the layout (buffers, push_bytes). Throws InvalidArgument when the words are not SPIR-V, VulkanError when the driver rejects them.
  const Pipeline& pipeline_from_spirv(std::string_view name, std::span<const std::uint32_t> words, std::uint32_t buffers,
                                      std::uint32_t push_bytes, std::span<const std::uint32_t> spec = {});
  // Whether reductions use the subgroup-arithmetic variants: the device supports them and
  // TRUENO_VULKAN_SUBGROUP is not 0; tests switch it to cover both paths.
  bool subgroup_reductions() const { return subgroup_reductions_; }
  // Whether gemm uses the NV cooperative-matrix shader: the device has it (DeviceInfo) and
  // TRUENO_VULKAN_COOPMAT is not 0.
  bool coopmat_gemm() const { return coopmat_gemm_; }
  void set_coopmat_gemm(bool on) { coopmat_gemm_ = on && coopmat_enabled_; }  // tests cover both paths
  void set_subgroup_reductions(bool on) { subgroup_reductions_ = on && info_.subgroup_arithmetic; }
  // Whether the ops that have a module built from a CUDA kernel through decy dispatch it where it fits
  // (Note [Vulkan shaders from CUDA], ops.cpp), else their hand-written shaders: on unless switched off
  // (tests and benchmarks run both).
  bool decy_shaders() const { return decy_shaders_; }
  void set_decy_shaders(bool on) { decy_shaders_ = on; }

  // The on-disk pipeline cache of this context (empty when off), whether it was loaded from disk at open,
  // and why an entry was rejected (corrupt, another device) when it was.
  const std::string& cache_path() const { return cache_path_; }
  bool cache_loaded() const { return cache_loaded_; }
  const std::string& cache_rejected() const { return cache_rejected_; }
  // Writes the pipeline cache to disk now (also done on destruction when pipelines were built).
  void save_cache();

  // Memory type for a buffer: host-visible device memory when `mappable` (host-cached memory first with
  // host_cached, for transfers the host reads), else device-local.
  std::uint32_t memory_type(std::uint32_t type_bits, bool mappable, bool host_cached = false) const;
  bool prefer_mapped() const { return prefer_mapped_; }
  VkMemoryPropertyFlags memory_flags(std::uint32_t type) const { return memory_.memoryTypes[type].propertyFlags; }
  // The largest buffer a shader can bind: maxStorageBufferRange, or less with TRUENO_VULKAN_MAX_BUFFER
  // (tests use it to exercise the split of large matrices).
  std::uint64_t max_buffer_bytes() const { return max_buffer_; }

  // Host <-> device-local copies through this context's one staging buffer and transfer recorder (Note
  // [Vulkan transfers], context.cpp): chunks of at most kTransferChunk bytes, each copied, submitted and
  // waited for. Buffer::upload/download use them for buffers the host cannot map.
  static constexpr std::size_t kTransferChunk = std::size_t{64} << 20;
  void copy_to_device(VkBuffer dst, std::size_t dst_offset, const void* src, std::size_t bytes);
  void copy_to_host(VkBuffer src, std::size_t src_offset, void* dst, std::size_t bytes);

 private:
  Context(const Api& api, int index, VkPhysicalDevice physical, DeviceInfo info);
  void load_cache();
  const Pipeline& build_pipeline(const std::string& key, const std::string& module, std::span<const std::uint32_t> words,
                                 std::uint32_t buffers, std::uint32_t push_bytes, std::span<const std::uint32_t> spec);
  const Api* api_;
  int index_;
  VkPhysicalDevice physical_;
  DeviceInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t queue_family_ = 0;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_, cache_rejected_;
  bool cache_loaded_ = false, cache_dirty_ = false, subgroup_reductions_ = false, prefer_mapped_ = false;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::uint64_t max_buffer_ = 0;
  bool coopmat_gemm_ = false, coopmat_enabled_ = false;  // in use; enabled on the VkDevice
  bool decy_shaders_ = true;
  std::string fault_;  // TRUENO_VULKAN_FAULT (Note [Vulkan fault injection], context.cpp)
  std::mutex mu_, queue_mu_;
  std::map<std::string, std::unique_ptr<Pipeline>, std::less<>> pipelines_;
  std::map<std::string, VkShaderModule, std::less<>> modules_;
  std::mutex transfer_mu_;
  std::unique_ptr<Buffer> staging_;          // grown to the largest chunk asked for, up to kTransferChunk
  std::unique_ptr<Recorder> transfer_rec_;   // made on first use; both released before the device
  void ensure_staging(std::size_t bytes);
};

// One device's line of the backend report.
struct VulkanStatus {
  bool available = false;
  bool automatic = false;  // false for CPU devices: never chosen automatically
  std::string text;
};
VulkanStatus status(int index = 0);

}  // namespace trueno::vulkan
