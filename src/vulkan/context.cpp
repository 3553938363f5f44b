// Physical devices, the per-device Context, buffers and command recording (context.h).
#include "trueno/vulkan/context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "core/strings.h"
#include "vulkan/shaders.h"

namespace trueno::vulkan {
namespace {

struct Physical {
  std::vector<VkPhysicalDevice> devices;
  std::string why;  // when there are none
};

const Physical& physical_devices() {
  static const Physical p = [] {
    Physical out;
    const Api* a = api(&out.why);
    if (a == nullptr) return out;
    std::uint32_t n = 0;
    VkResult r = a->vkEnumeratePhysicalDevices(a->instance, &n, nullptr);
    if (r == VK_SUCCESS && n > 0) {
      out.devices.resize(n);
      r = a->vkEnumeratePhysicalDevices(a->instance, &n, out.devices.data());
      out.devices.resize(n);
    }
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
      out.devices.clear();
      out.why = strcat("no Vulkan device: vkEnumeratePhysicalDevices: ", result_name(r));
    } else if (out.devices.empty()) {
      out.why = "no Vulkan device: the loader found no driver with a device (no ICD installed? VK_ICD_FILENAMES?)";
    }
    return out;
  }();
  return p;
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(), [name](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::string gib(std::uint64_t bytes) {
  std::ostringstream os;
  if (bytes >= (1ull << 30))
    os << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1ull << 30) << " GiB";
  else
    os << (bytes >> 20) << " MiB";
  return os.str();
}

DeviceInfo read_info(const Api& a, VkPhysicalDevice pd) {
  DeviceInfo d;
  VkPhysicalDeviceProperties base{};
  a.vkGetPhysicalDeviceProperties(pd, &base);
  std::uint32_t n_ext = 0;
  a.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, nullptr);
  std::vector<VkExtensionProperties> exts(n_ext);
  a.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n_ext, exts.data());
  exts.resize(n_ext);
  const std::uint32_t v = base.apiVersion;

  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &sub;
  const bool has_driver_props = v >= VK_API_VERSION_1_2 || has_extension(exts, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (has_driver_props) sub.pNext = &drv;
  a.vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures idot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  void** tail = &feats.pNext;
  *tail = &s16, tail = &s16.pNext;
  if (v >= VK_API_VERSION_1_2) *tail = &s8, tail = &s8.pNext;  // core in 1.2 (decy's u8 / i8 buffers)
  if (v >= VK_API_VERSION_1_2 || has_extension(exts, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) *tail = &f16, tail = &f16.pNext;
  const bool idot_ext = v >= VK_API_VERSION_1_3 || has_extension(exts, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  if (idot_ext) *tail = &idot, tail = &idot.pNext;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  const bool nv_coop_ext = has_extension(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (nv_coop_ext) *tail = &coop, tail = &coop.pNext;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  const bool af_ext = has_extension(exts, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (af_ext) *tail = &af, tail = &af.pNext;
  a.vkGetPhysicalDeviceFeatures2(pd, &feats);
  d.float_atomics = af_ext && af.shaderBufferFloat32Atomics == VK_TRUE && af.shaderBufferFloat32AtomicAdd == VK_TRUE &&
                    af.shaderSharedFloat32Atomics == VK_TRUE && af.shaderSharedFloat32AtomicAdd == VK_TRUE;

  d.name = base.deviceName;
  switch (base.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: d.type = "discrete"; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: d.type = "integrated"; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: d.type = "virtual"; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: d.type = "cpu"; break;
    default: d.type = "other"; break;
  }
  d.cpu = base.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  d.api_version = v;
  d.driver_version = base.driverVersion;
  d.vendor_id = base.vendorID;
  d.device_id = base.deviceID;
  d.driver = has_driver_props ? strcat(drv.driverName, ' ', drv.driverInfo) : strcat("driver version ", base.driverVersion);
  d.subgroup_size = sub.subgroupSize;
  d.subgroup_arithmetic = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
                          (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0 &&
                          (sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0;
  d.storage_16bit = s16.storageBuffer16BitAccess == VK_TRUE;
  d.storage_8bit = v >= VK_API_VERSION_1_2 && s8.storageBuffer8BitAccess == VK_TRUE;
  d.int64 = feats.features.shaderInt64 == VK_TRUE;
  d.float64 = feats.features.shaderFloat64 == VK_TRUE;
  d.float16 = f16.shaderFloat16 == VK_TRUE;
  d.integer_dot_product = idot_ext && idot.shaderIntegerDotProduct == VK_TRUE;
  d.cooperative_matrix = has_extension(exts, "VK_KHR_cooperative_matrix") || has_extension(exts, "VK_NV_cooperative_matrix");
  d.nv_cooperative_matrix = nv_coop_ext && coop.cooperativeMatrix == VK_TRUE && d.float16 && a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV;
  if (d.nv_cooperative_matrix) {
    std::uint32_t count = 0;
    a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, shapes.data());
    for (const auto& m : shapes) {
      if (m.AType != VK_COMPONENT_TYPE_FLOAT16_NV || m.BType != VK_COMPONENT_TYPE_FLOAT16_NV || m.CType != VK_COMPONENT_TYPE_FLOAT32_NV ||
          m.DType != VK_COMPONENT_TYPE_FLOAT32_NV || m.scope != VK_SCOPE_SUBGROUP_NV)
        continue;
      d.coopmat_shapes += strcat(d.coopmat_shapes.empty() ? "" : " ", m.MSize, 'x', m.NSize, 'x', m.KSize);
      if (m.MSize == 16 && m.KSize == 16 && (m.NSize == 16 || m.NSize == 8)) d.coopmat_n = std::max(d.coopmat_n, m.NSize);
    }
  }
  d.max_storage_buffer_range = base.limits.maxStorageBufferRange;
  d.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
  d.max_workgroup_count_x = base.limits.maxComputeWorkGroupCount[0];
  d.max_workgroup_count_y = base.limits.maxComputeWorkGroupCount[1];
  d.max_push_constants = base.limits.maxPushConstantsSize;
  std::memcpy(d.pipeline_cache_uuid, base.pipelineCacheUUID, VK_UUID_SIZE);
  VkPhysicalDeviceMemoryProperties mem{};
  a.vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (std::uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    d.heaps.push_back({mem.memoryHeaps[i].size, (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  return d;
}

bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e != nullptr && std::strcmp(e, value) == 0;
}

}  // namespace

std::string DeviceInfo::describe() const {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::string heap_text;
  for (const MemoryHeap& h : heaps) heap_text += strcat(heap_text.empty() ? "" : " + ", gib(h.bytes), h.device_local ? " device-local" : " host");
  return strcat(name, " (", type, ", Vulkan ", version_string(api_version), ", driver ", driver, ", subgroup ", subgroup_size,
                subgroup_arithmetic ? " with arithmetic" : " without arithmetic", ", 16-bit storage ", yes(storage_16bit), ", 8-bit storage ", yes(storage_8bit),
                ", float16 ", yes(float16), ", float64 ", yes(float64), ", float atomics ", yes(float_atomics), ", integer dot product ", yes(integer_dot_product), ", cooperative matrix ",
                yes(cooperative_matrix), coopmat_shapes.empty() ? "" : strcat(" (NV f16: ", coopmat_shapes, ")"), ", max storage buffer ", gib(max_storage_buffer_range), ", heaps ", heap_text, ")");
}

int device_count(std::string* why) {
  const Physical& p = physical_devices();
  if (p.devices.empty() && why != nullptr) *why = p.why;
  return static_cast<int>(p.devices.size());
}

std::optional<DeviceInfo> probe(int index, std::string* why) {
  const Physical& p = physical_devices();
  if (p.devices.empty()) {
    if (why) *why = p.why;
    return std::nullopt;
  }
  if (index < 0 || index >= static_cast<int>(p.devices.size())) {
    if (why) *why = strcat("no Vulkan device ", index, " (this machine has ", p.devices.size(), ")");
    return std::nullopt;
  }
  return read_info(*api(), p.devices[static_cast<std::size_t>(index)]);
}

std::string shaders_identity() {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    for (const char* c = kEmbeddedShaders[i].name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    for (std::size_t w = 0; w < kEmbeddedShaders[i].word_count; ++w) h = (h ^ kEmbeddedShaders[i].words[w]) * 1099511628211ull;
  }
  std::ostringstream os;
  os << std::hex << std::setw(16) << std::setfill('0') << h;
  if (const char* f = std::getenv("TRUENO_VULKAN_FAULT"); f != nullptr && *f != '\0') os << " fault " << f;  // never cached as good
  return os.str();
}

const EmbeddedShader* find_shader(std::string_view name) {
  for (std::size_t i = 0; i < kEmbeddedShaderCount; ++i)
    if (name == kEmbeddedShaders[i].name) return &kEmbeddedShaders[i];
  return nullptr;
}

// ---- Context ----

std::shared_ptr<Context> Context::open(int index) {
  std::string why;
  const auto info = probe(index, &why);
  if (!info) throw BackendUnavailable(strcat("device vulkan:", index, " is not available: ", why));
  return std::shared_ptr<Context>(new Context(*api(), index, physical_devices().devices[static_cast<std::size_t>(index)], *info));
}

Context::Context(const Api& a, int index, VkPhysicalDevice physical, DeviceInfo info)
    : api_(&a), index_(index), physical_(physical), info_(std::move(info)) {
  std::uint32_t n = 0;
  a.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  a.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  bool found = false;
  for (std::uint32_t i = 0; i < n && !found; ++i)  // a compute family, a compute-only one preferred
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) queue_family_ = i, found = true;
  for (std::uint32_t i = 0; i < n && !found; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) queue_family_ = i, found = true;
  if (!found) throw BackendUnavailable(strcat("device vulkan:", index, " (", info_.name, ") has no compute queue"));
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = queue_family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  // The prefill GEMM's cooperative-matrix path: the extension, its feature and f16 arithmetic.
  coopmat_gemm_ = info_.nv_cooperative_matrix && info_.coopmat_n != 0 && !env_is("TRUENO_VULKAN_COOPMAT", "0");
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  std::vector<const char*> extensions;
  if (coopmat_gemm_) {
    coop.cooperativeMatrix = VK_TRUE;
    f16.shaderFloat16 = VK_TRUE;
    coop.pNext = &f16;
    ci.pNext = &coop;
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  // f32 atomicAdd / atomicExchange on buffers and shared memory (decy's float atomics) where the device has them.
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  if (info_.float_atomics) {
    af.shaderBufferFloat32Atomics = af.shaderBufferFloat32AtomicAdd = af.shaderSharedFloat32Atomics = af.shaderSharedFloat32AtomicAdd = VK_TRUE;
    af.pNext = const_cast<void*>(ci.pNext);
    ci.pNext = &af;
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  ci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.empty() ? nullptr : extensions.data();
  // 64-bit integers and 16-bit storage-buffer elements in shaders where the device has them (decy's
  // kernels index with CUDA's u64 and store f16 bits as u16).
  VkPhysicalDeviceFeatures core{};
  core.shaderInt64 = info_.int64 ? VK_TRUE : VK_FALSE;
  core.shaderFloat64 = info_.float64 ? VK_TRUE : VK_FALSE;  // decy's kernels with double (temperature_draw)
  ci.pEnabledFeatures = &core;
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  if (info_.storage_16bit) {
    s16.storageBuffer16BitAccess = VK_TRUE;
    s16.pNext = const_cast<void*>(ci.pNext);
    ci.pNext = &s16;
  }
  VkPhysicalDevice8BitStorageFeatures s8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  if (info_.storage_8bit) {  // and u8 / i8 ones
    s8.storageBuffer8BitAccess = VK_TRUE;
    s8.pNext = const_cast<void*>(ci.pNext);
    ci.pNext = &s8;
  }
  check(a.vkCreateDevice(physical_, &ci, nullptr, &device_), "vkCreateDevice");
  coopmat_enabled_ = coopmat_gemm_;
  a.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  a.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  // Map buffers directly when a host-visible device-local type lives on a heap as large as the largest
  // device-local heap (unified memory, CPU devices, resizable BAR), not on a 256 MiB BAR window.
  std::uint64_t largest = 0;
  for (std::uint32_t i = 0; i < memory_.memoryHeapCount; ++i)
    if (memory_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) largest = std::max(largest, memory_.memoryHeaps[i].size);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
    if ((memory_.memoryTypes[i].propertyFlags & want) == want && memory_.memoryHeaps[memory_.memoryTypes[i].heapIndex].size * 2 >= largest)
      prefer_mapped_ = true;
  if (env_is("TRUENO_VULKAN_STAGING", "1")) prefer_mapped_ = false;
  if (const char* f = std::getenv("TRUENO_VULKAN_FAULT"); f != nullptr && *f != '\0') {
    fault_ = f;
    if (find_shader(fault_ + "_fault") == nullptr)
      throw InvalidArgument(strcat("TRUENO_VULKAN_FAULT='", f, "': no such fault build (rope, gemv)"));
  }
  max_buffer_ = info_.max_storage_buffer_range;
  if (const char* e = std::getenv("TRUENO_VULKAN_MAX_BUFFER"); e != nullptr && *e != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(e, &end, 10);
    if (end == e || *end != '\0' || v < 4096)
      throw InvalidArgument(strcat("TRUENO_VULKAN_MAX_BUFFER='", e, "': expected a byte count of at least 4096"));
    max_buffer_ = std::min<std::uint64_t>(max_buffer_, v / 4 * 4);  // whole words (Buffer rounds up to them)
  }
  subgroup_reductions_ = info_.subgroup_arithmetic && !env_is("TRUENO_VULKAN_SUBGROUP", "0");
  load_cache();
}

Context::~Context() {
  const Api& a = *api_;
  a.vkDeviceWaitIdle(device_);
  transfer_rec_.reset(), staging_.reset();
  if (cache_dirty_) {
    try {
      save_cache();
    } catch (...) {  // a full disk must not turn a destructor into a crash; save_cache logs
    }
  }
  for (auto& [name, p] : pipelines_) {
    a.vkDestroyPipeline(device_, p->pipeline, nullptr);
    a.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    a.vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
  }
  for (auto& [name, m] : modules_) a.vkDestroyShaderModule(device_, m, nullptr);
  if (cache_ != VK_NULL_HANDLE) a.vkDestroyPipelineCache(device_, cache_, nullptr);
  a.vkDestroyDevice(device_, nullptr);
}

std::uint32_t Context::memory_type(std::uint32_t type_bits, bool mappable, bool host_cached) const {
  const VkMemoryPropertyFlags want = mappable ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                              : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  // Mappable memory that is also device-local first (it is what the device computes in); for transfers,
  // host-cached memory first: the host reads device-local mapped memory (a BAR window, write-combined)
  // uncached, ~4 ms for a 32000-float logits row on the H200, 100x slower than from cached memory.
  for (int pass = 0; pass < 2; ++pass)
    for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
      if (!(type_bits & (1u << i))) continue;
      const VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
      if ((f & want) != want) continue;
      if (pass == 0 && mappable && !host_cached && !(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
      if (pass == 0 && host_cached && !(f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)) continue;
      return i;
    }
  throw VulkanError(strcat("vulkan:", index_, " (", info_.name, "): no ", mappable ? "host-visible coherent" : "device-local",
                           " memory type for a buffer"), VK_ERROR_FEATURE_NOT_PRESENT);
}

// Note [Vulkan fault injection]
// Shaders are compiled at build time, so the faults the parity gate must reject (as TRUENO_CUDA_DEFINES
// compiles them into CUDA kernels) are built too: <shader>_fault is the shader with TRUENO_FAULT_<SHADER>
// defined (rope: the rotation scaled from position 4 on; gemv and gemv_rows: one unit skipped per row). A context
// opened with TRUENO_VULKAN_FAULT=<shader> uses that build wherever the shader (or its subgroup variant)
// is asked for, and shaders_identity() names the fault, so a verdict cached for the good shaders never
// covers it.
const Pipeline& Context::pipeline(const char* module, std::uint32_t buffers, std::uint32_t push_bytes, std::span<const std::uint32_t> spec) {
  // Note [Vulkan fault injection]: TRUENO_VULKAN_FAULT=<shader> swaps in its test-only faulty build.
  std::string faulty;
  if (!fault_.empty()) {
    std::string_view base = module;
    if (base.ends_with("_subgroup")) base.remove_suffix(9);
    const bool named = base == fault_ || (base.starts_with(fault_) && base.substr(fault_.size()).starts_with("_"));  // gemv: gemv_rows too
    if (named && find_shader(strcat(base, "_fault")) != nullptr) faulty = strcat(base, "_fault"), module = faulty.c_str();
  }
  std::string key = strcat(module, '[');
  for (std::size_t i = 0; i < spec.size(); ++i) key += strcat(i ? "," : "", spec[i]);
  key += ']';
  std::lock_guard lock(mu_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;
  const EmbeddedShader* s = find_shader(module);
  if (s == nullptr) throw InvalidArgument(strcat("no embedded Vulkan shader '", module, "'"));
  return build_pipeline(key, module, std::span(s->words, s->word_count), buffers, push_bytes, spec);
}

const Pipeline& Context::pipeline_from_spirv(std::string_view name, std::span<const std::uint32_t> words, std::uint32_t buffers,
                                             std::uint32_t push_bytes, std::span<const std::uint32_t> spec) {
  if (words.size() < 5 || words[0] != 0x07230203u) throw InvalidArgument(strcat("shader ", name, ": not a SPIR-V module"));
  std::uint64_t h = 1469598103934665603ull;  // the words' hash: one name given two modules gets two pipelines
  for (const std::uint32_t w : words) h = (h ^ w) * 1099511628211ull;
  std::ostringstream module;
  module << "spirv:" << name << ":" << std::hex << h;
  // The layout is part of the key: callers may push the same block as its members' extent or as std430's
  // rounded size (e.g. {u64; u32}: 12 or 16 bytes), and each gets a pipeline that takes what it gives.
  std::string key = strcat(module.str(), '/', buffers, '/', push_bytes, '[');
  for (std::size_t i = 0; i < spec.size(); ++i) key += strcat(i ? "," : "", spec[i]);
  key += ']';
  std::lock_guard lock(mu_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;
  return build_pipeline(key, module.str(), words, buffers, push_bytes, spec);
}

// Called with mu_ held.
const Pipeline& Context::build_pipeline(const std::string& key, const std::string& module, std::span<const std::uint32_t> words,
                                        std::uint32_t buffers, std::uint32_t push_bytes, std::span<const std::uint32_t> spec) {
  const Api& a = *api_;
  VkShaderModule& m = modules_[module];
  if (m == VK_NULL_HANDLE) {
    VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = words.size() * 4;
    ci.pCode = words.data();
    check(a.vkCreateShaderModule(device_, &ci, nullptr, &m), strcat("vkCreateShaderModule(", module, ")").c_str());
  }
  if (push_bytes > info_.max_push_constants)
    throw InvalidArgument(strcat("shader ", module, ": ", push_bytes, " bytes of push constants, the device allows ", info_.max_push_constants));
  auto p = std::make_unique<Pipeline>();
  p->buffers = buffers, p->push_bytes = push_bytes, p->name = key;
  std::vector<VkDescriptorSetLayoutBinding> bindings(buffers);
  for (std::uint32_t i = 0; i < buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.bindingCount = buffers;
  dl.pBindings = bindings.data();
  check(a.vkCreateDescriptorSetLayout(device_, &dl, nullptr, &p->set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &p->set_layout;
  pl.pushConstantRangeCount = push_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  if (const VkResult r = a.vkCreatePipelineLayout(device_, &pl, nullptr, &p->layout); r != VK_SUCCESS) {
    a.vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    check(r, "vkCreatePipelineLayout");
  }
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (std::uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4, 4};
  VkSpecializationInfo si{static_cast<std::uint32_t>(spec.size()), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = m;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  ci.layout = p->layout;
  if (const VkResult r = a.vkCreateComputePipelines(device_, cache_, 1, &ci, nullptr, &p->pipeline); r != VK_SUCCESS) {
    a.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    a.vkDestroyDescriptorSetLayout(device_, p->set_layout, nullptr);
    check(r, strcat("vkCreateComputePipelines(", key, ")").c_str());
  }
  cache_dirty_ = true;
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

// ---- Buffer ----

Buffer::Buffer(Context& c, std::size_t bytes) : c_(&c), bytes_(bytes) {
  const Api& a = c.vk();
  if (bytes == 0) throw InvalidArgument("a Vulkan buffer of 0 bytes");
  // Whole 32-bit words: the shaders read storage as uint/float arrays, whose length is the range / 4
  // rounded down, and a device may return 0 for a word past it (lavapipe does), so the last 1..3 bytes of
  // a buffer of another size (GGUF blocks of 18, 34 or 210 bytes) would read as 0.
  const std::size_t words = (bytes + 3) / 4 * 4;
  if (words > c.max_buffer_bytes())
    throw InvalidArgument(strcat("a Vulkan buffer of ", bytes, " bytes: above vulkan:", c.index(), "'s maxStorageBufferRange (",
                                 c.max_buffer_bytes(), " bytes", c.max_buffer_bytes() < c.info().max_storage_buffer_range ? ", lowered by TRUENO_VULKAN_MAX_BUFFER" : "",
                                 "); split it (realizar splits matrices by rows)"));
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = words;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(a.vkCreateBuffer(c.device(), &ci, nullptr, &buffer_), "vkCreateBuffer");
  VkMemoryRequirements req{};
  a.vkGetBufferMemoryRequirements(c.device(), buffer_, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  try {
    ai.memoryTypeIndex = c.memory_type(req.memoryTypeBits, c.prefer_mapped());
    if (const VkResult r = a.vkAllocateMemory(c.device(), &ai, nullptr, &memory_); r != VK_SUCCESS)
      throw VulkanError(strcat("vkAllocateMemory of ", bytes, " bytes on vulkan:", c.index(), " (", c.info().name, "): ", result_name(r)),
                        static_cast<int>(r));
    check(a.vkBindBufferMemory(c.device(), buffer_, memory_, 0), "vkBindBufferMemory");
    if (c.prefer_mapped()) check(a.vkMapMemory(c.device(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    uncached_ = mapped_ != nullptr && !(c.memory_flags(ai.memoryTypeIndex) & VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept
    : c_(o.c_), buffer_(o.buffer_), memory_(o.memory_), mapped_(o.mapped_), bytes_(o.bytes_), uncached_(o.uncached_) {
  o.buffer_ = VK_NULL_HANDLE, o.memory_ = VK_NULL_HANDLE, o.mapped_ = nullptr, o.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    c_ = o.c_, buffer_ = o.buffer_, memory_ = o.memory_, mapped_ = o.mapped_, bytes_ = o.bytes_, uncached_ = o.uncached_;
    o.buffer_ = VK_NULL_HANDLE, o.memory_ = VK_NULL_HANDLE, o.mapped_ = nullptr, o.bytes_ = 0;
  }
  return *this;
}

void Buffer::release() noexcept {
  if (c_ == nullptr) return;
  const Api& a = c_->vk();
  if (mapped_ != nullptr) a.vkUnmapMemory(c_->device(), memory_);
  if (buffer_ != VK_NULL_HANDLE) a.vkDestroyBuffer(c_->device(), buffer_, nullptr);
  if (memory_ != VK_NULL_HANDLE) a.vkFreeMemory(c_->device(), memory_, nullptr);
  buffer_ = VK_NULL_HANDLE, memory_ = VK_NULL_HANDLE, mapped_ = nullptr;
}

namespace {
void check_range(std::size_t bytes, std::size_t offset, std::size_t size, const char* what) {
  if (offset > size || bytes > size - offset)
    throw InvalidArgument(strcat("Vulkan buffer ", what, " of ", bytes, " bytes at offset ", offset, ": the buffer has ", size));
}
}  // namespace

Buffer Buffer::transfer(Context& c, std::size_t bytes) {
  const Api& a = c.vk();
  Buffer s;
  s.c_ = &c;
  s.bytes_ = bytes;
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = bytes;
  ci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  check(a.vkCreateBuffer(c.device(), &ci, nullptr, &s.buffer_), "vkCreateBuffer (staging)");
  VkMemoryRequirements req{};
  a.vkGetBufferMemoryRequirements(c.device(), s.buffer_, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = c.memory_type(req.memoryTypeBits, true, /*host_cached=*/true);
  check(a.vkAllocateMemory(c.device(), &ai, nullptr, &s.memory_), "vkAllocateMemory (staging)");
  check(a.vkBindBufferMemory(c.device(), s.buffer_, s.memory_, 0), "vkBindBufferMemory (staging)");
  check(a.vkMapMemory(c.device(), s.memory_, 0, VK_WHOLE_SIZE, 0, &s.mapped_), "vkMapMemory (staging)");
  return s;
}

void Buffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  check_range(bytes, offset, bytes_, "upload");
  if (bytes == 0) return;
  if (mapped_ != nullptr) {
    std::memcpy(static_cast<char*>(mapped_) + offset, src, bytes);
    return;
  }
  c_->copy_to_device(buffer_, offset, src, bytes);
}

void Buffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  check_range(bytes, offset, bytes_, "download");
  if (bytes == 0) return;
  // Reading a BAR window (mapped, not host-cached) runs at ~100 MB/s: large reads copy on the device
  // into the context's cached staging first (Note [Vulkan transfers]).
  constexpr std::size_t kUncachedReadBytes = 64 << 10;
  if (mapped_ != nullptr && !(uncached_ && bytes >= kUncachedReadBytes)) {
    std::memcpy(dst, static_cast<const char*>(mapped_) + offset, bytes);
    return;
  }
  c_->copy_to_host(buffer_, offset, dst, bytes);
}

// Note [Vulkan transfers]
// A copy to or from a buffer the host cannot map goes through host-visible staging memory: one staging
// buffer per context (host-cached, grown to the largest chunk, at most kTransferChunk) and one recorder
// serve every transfer, under a lock; larger copies go in chunks (each copy used to allocate its own
// staging memory, pool and fence). On the H200, with resizable BAR, buffers are mapped directly
// (prefer_mapped) but the mapping is write-combined and uncached: writes stream, reads crawl (48 MB of
// device-matmul traffic took 300-600 ms, docs/PERFORMANCE.md), so a large read of such a buffer copies on
// the device into the cached staging first and reads that.
void Context::ensure_staging(std::size_t bytes) {
  if (staging_ && staging_->bytes() >= bytes) return;
  staging_.reset();
  staging_ = std::make_unique<Buffer>(Buffer::transfer(*this, bytes));
  if (!transfer_rec_) transfer_rec_ = std::make_unique<Recorder>(*this);
}

void Context::copy_to_device(VkBuffer dst, std::size_t dst_offset, const void* src, std::size_t bytes) {
  std::lock_guard lock(transfer_mu_);
  ensure_staging(std::min(bytes, kTransferChunk));
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kTransferChunk, bytes - done);
    std::memcpy(staging_->data(), static_cast<const char*>(src) + done, n);
    transfer_rec_->copy(staging_->handle(), dst, n, 0, dst_offset + done);
    transfer_rec_->submit();
    done += n;
  }
}

void Context::copy_to_host(VkBuffer src, std::size_t src_offset, void* dst, std::size_t bytes) {
  std::lock_guard lock(transfer_mu_);
  ensure_staging(std::min(bytes, kTransferChunk));
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kTransferChunk, bytes - done);
    transfer_rec_->copy(src, staging_->handle(), n, src_offset + done, 0);
    transfer_rec_->submit();
    std::memcpy(static_cast<char*>(dst) + done, staging_->data(), n);
    done += n;
  }
}

// ---- Recorder ----

Recorder::Recorder(Context& c) : c_(&c) {
  const Api& a = c.vk();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = c.queue_family();
  check(a.vkCreateCommandPool(c.device(), &pi, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = a.vkAllocateCommandBuffers(c.device(), &ai, &cmd_); r != VK_SUCCESS ||
      (r = a.vkCreateFence(c.device(), &fi, nullptr, &fence_)) != VK_SUCCESS) {
    a.vkDestroyCommandPool(c.device(), pool_, nullptr);
    check(r, "vkAllocateCommandBuffers/vkCreateFence");
  }
}

Recorder::~Recorder() {
  const Api& a = c_->vk();
  for (VkDescriptorPool p : pools_) a.vkDestroyDescriptorPool(c_->device(), p, nullptr);
  a.vkDestroyFence(c_->device(), fence_, nullptr);
  a.vkDestroyCommandPool(c_->device(), pool_, nullptr);  // frees cmd_
}

void Recorder::begin() {
  if (sealed_) throw InvalidArgument("Vulkan recorder: recording into a sealed command buffer (reset() it first)");
  if (recording_) return;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(c_->vk().vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  recording_ = true;
}

namespace {
constexpr std::uint32_t kSetsPerPool = 64, kBuffersPerSet = 8;

void barrier(const Api& a, VkCommandBuffer cmd, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = dst_access;
  a.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, dst_stage, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
}
constexpr VkPipelineStageFlags kNextStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kNextAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                                      VK_ACCESS_TRANSFER_WRITE_BIT;
}  // namespace

VkDescriptorSet Recorder::allocate_set(VkDescriptorSetLayout layout) {
  const Api& a = c_->vk();
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (pool_used_ < pools_.size()) {
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = pools_[pool_used_];
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &layout;
      VkDescriptorSet set = VK_NULL_HANDLE;
      const VkResult r = a.vkAllocateDescriptorSets(c_->device(), &ai, &set);
      if (r == VK_SUCCESS) return set;
      if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) check(r, "vkAllocateDescriptorSets");
      ++pool_used_;  // this pool is full: the next one
    }
    if (pool_used_ >= pools_.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBuffersPerSet};
      VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pi.maxSets = kSetsPerPool;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool p = VK_NULL_HANDLE;
      check(a.vkCreateDescriptorPool(c_->device(), &pi, nullptr, &p), "vkCreateDescriptorPool");
      pools_.push_back(p);
      pool_used_ = pools_.size() - 1;
    }
  }
  throw VulkanError("vkAllocateDescriptorSets: a fresh pool is full", VK_ERROR_OUT_OF_POOL_MEMORY);
}

void Recorder::dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push, std::size_t push_bytes,
                        std::uint32_t gx, std::uint32_t gy, std::uint32_t gz) {
  dispatch_buffers(p, std::span<const Buffer* const>(buffers.begin(), buffers.size()), push, push_bytes, gx, gy, gz);
}

void Recorder::dispatch_buffers(const Pipeline& p, std::span<const Buffer* const> buffers, const void* push, std::size_t push_bytes,
                                std::uint32_t gx, std::uint32_t gy, std::uint32_t gz) {
  if (buffers.size() != p.buffers || buffers.size() > kBuffersPerSet)
    throw InvalidArgument(strcat("pipeline ", p.name, " takes ", p.buffers, " buffers, given ", buffers.size()));
  if (push_bytes != p.push_bytes) throw InvalidArgument(strcat("pipeline ", p.name, " takes ", p.push_bytes, " bytes of push constants, given ", push_bytes));
  const Api& a = c_->vk();
  begin();
  VkDescriptorSet set = allocate_set(p.set_layout);
  VkDescriptorBufferInfo infos[kBuffersPerSet];
  VkWriteDescriptorSet writes[kBuffersPerSet];
  std::uint32_t i = 0;
  for (const Buffer* b : buffers) {
    if (b == nullptr || b->handle() == VK_NULL_HANDLE) throw InvalidArgument(strcat("pipeline ", p.name, ": buffer ", i, " is empty"));
    if (b->context() != c_) throw InvalidArgument(strcat("pipeline ", p.name, ": buffer ", i, " belongs to another Vulkan context"));
    infos[i] = {b->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
    ++i;
  }
  a.vkUpdateDescriptorSets(c_->device(), i, writes, 0, nullptr);
  a.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  a.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) a.vkCmdPushConstants(cmd_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, static_cast<std::uint32_t>(push_bytes), push);
  a.vkCmdDispatch(cmd_, gx, gy, gz);
  if (concurrent_)
    pending_barrier_ = true;
  else
    barrier(a, cmd_, kNextStages, kNextAccess);
  ++dispatches_;
}

void Recorder::end_concurrent() {
  concurrent_ = false;
  if (pending_barrier_) barrier(c_->vk(), cmd_, kNextStages, kNextAccess);
  pending_barrier_ = false;
}

void Recorder::fill(Buffer& b, std::uint32_t value) {
  begin();
  c_->vk().vkCmdFillBuffer(cmd_, b.handle(), 0, VK_WHOLE_SIZE, value);
  barrier(c_->vk(), cmd_, kNextStages, kNextAccess);
}

void Recorder::copy(VkBuffer src, VkBuffer dst, std::size_t bytes, std::size_t src_offset, std::size_t dst_offset) {
  begin();
  VkBufferCopy region{src_offset, dst_offset, bytes};
  c_->vk().vkCmdCopyBuffer(cmd_, src, dst, 1, &region);
  barrier(c_->vk(), cmd_, kNextStages, kNextAccess);
}

void Recorder::seal() {
  if (sealed_) return;
  if (concurrent_) end_concurrent();
  begin();  // an empty recording is a valid (empty) command buffer
  barrier(c_->vk(), cmd_, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  check(c_->vk().vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  recording_ = false;
  sealed_ = true;
}

void Recorder::run() {
  const Api& a = c_->vk();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  {
    std::lock_guard lock(c_->queue_mutex());
    check(a.vkQueueSubmit(c_->queue(), 1, &si, fence_), "vkQueueSubmit");
  }
  check(a.vkWaitForFences(c_->device(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(a.vkResetFences(c_->device(), 1, &fence_), "vkResetFences");
}

void Recorder::replay() {
  if (!sealed_) throw InvalidArgument("Vulkan recorder: replay() of a recording that is not sealed");
  run();
}

void Recorder::reset() {
  const Api& a = c_->vk();
  if (recording_) check(a.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  recording_ = sealed_ = false;
  check(a.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  for (VkDescriptorPool p : pools_) check(a.vkResetDescriptorPool(c_->device(), p, 0), "vkResetDescriptorPool");
  pool_used_ = 0;
  dispatches_ = 0;
}

void Recorder::submit() {
  if (!recording_ && !sealed_) return;
  seal();
  run();
  reset();
}

}  // namespace trueno::vulkan
