// dlopen of the Vulkan loader and the process-wide instance (loader.h).
#include "trueno/vulkan/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/strings.h"

namespace trueno::vulkan {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string why;
};

void load(Loaded& l) {
  const char* env = std::getenv("TRUENO_VULKAN_LOADER");
  const std::string lib = env != nullptr && *env != '\0' ? std::string(env) : std::string("libvulkan.so.1");
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    l.why = strcat("no Vulkan loader: ", e ? e : lib + " not found", " (Debian: apt-get install libvulkan1 and a driver, e.g. mesa-vulkan-drivers)");
    return;
  }
  Api& a = l.api;
  a.library = lib;
  a.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(h, "vkGetInstanceProcAddr"));
  if (a.vkGetInstanceProcAddr == nullptr) {
    l.why = strcat(lib, " lacks vkGetInstanceProcAddr (not a Vulkan loader?)");
    return;
  }
  auto enumerate_version =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(a.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
  a.instance_version = VK_API_VERSION_1_0;
  if (enumerate_version != nullptr) enumerate_version(&a.instance_version);
  if (a.instance_version < VK_API_VERSION_1_1) {
    l.why = strcat("the Vulkan loader ", lib, " is ", version_string(a.instance_version), "; trueno needs 1.1");
    return;
  }
  auto create = reinterpret_cast<PFN_vkCreateInstance>(a.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
  if (create == nullptr) {
    l.why = strcat(lib, " lacks vkCreateInstance");
    return;
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "trueno";
  app.pEngineName = "trueno";
  app.apiVersion = a.instance_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : a.instance_version;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  if (const VkResult r = create(&ci, nullptr, &a.instance); r != VK_SUCCESS) {
    l.why = strcat("no Vulkan driver: vkCreateInstance: ", result_name(r));
    return;
  }
  std::string missing;
#define TRUENO_VK_RESOLVE(fn)                                                                   \
  a.fn = reinterpret_cast<PFN_##fn>(a.vkGetInstanceProcAddr(a.instance, #fn));                   \
  if (a.fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(#fn);
  TRUENO_VK_INSTANCE_FUNCTIONS(TRUENO_VK_RESOLVE)
#undef TRUENO_VK_RESOLVE
  if (!missing.empty()) {
    l.why = strcat(lib, " lacks ", missing, " (loader too old?)");
    return;
  }
  a.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      a.vkGetInstanceProcAddr(a.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  l.ok = true;
  // The instance lives for the process (like the loaded library): destroying it at exit would race
  // with contexts that static objects still hold.
}

}  // namespace

const Api* api(std::string* why) {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] { load(l); });
  if (!l.ok && why != nullptr) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

std::string result_name(VkResult r) {
  switch (r) {
#define TRUENO_VK_RESULT(name) \
  case name:                   \
    return #name;
    TRUENO_VK_RESULT(VK_SUCCESS)
    TRUENO_VK_RESULT(VK_NOT_READY)
    TRUENO_VK_RESULT(VK_TIMEOUT)
    TRUENO_VK_RESULT(VK_EVENT_SET)
    TRUENO_VK_RESULT(VK_EVENT_RESET)
    TRUENO_VK_RESULT(VK_INCOMPLETE)
    TRUENO_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    TRUENO_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TRUENO_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    TRUENO_VK_RESULT(VK_ERROR_DEVICE_LOST)
    TRUENO_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    TRUENO_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    TRUENO_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    TRUENO_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    TRUENO_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    TRUENO_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    TRUENO_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TRUENO_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    TRUENO_VK_RESULT(VK_ERROR_UNKNOWN)
    TRUENO_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    TRUENO_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TRUENO_VK_RESULT(VK_ERROR_FRAGMENTATION)
    TRUENO_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    TRUENO_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
#undef TRUENO_VK_RESULT
    default:
      return strcat("VkResult ", static_cast<int>(r));
  }
}

void check(VkResult r, const char* call) {
  if (r != VK_SUCCESS) throw VulkanError(strcat(call, ": ", result_name(r)), static_cast<int>(r));
}

std::string version_string(std::uint32_t v) {
  return strcat(VK_API_VERSION_MAJOR(v), '.', VK_API_VERSION_MINOR(v), '.', VK_API_VERSION_PATCH(v));
}

}  // namespace trueno::vulkan
