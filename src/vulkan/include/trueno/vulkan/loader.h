// The Vulkan loader (libvulkan.so.1), opened at run time with dlopen: trueno links no Vulkan library
// (the headers are compiled with VK_NO_PROTOTYPES), so it builds and runs everywhere, and a machine
// without the loader, or without a driver, gets a reason, not a crash.
#pragma once
#include <string>

#include "trueno/error.h"

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

namespace trueno::vulkan {

// A Vulkan call failed: the message names the call and the VkResult ("vkCreateDevice: VK_ERROR_...").
class VulkanError : public Error {
 public:
  VulkanError(const std::string& what, int code) : Error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Every entry point trueno uses, resolved through vkGetInstanceProcAddr on one process-wide instance
// (device-level functions go through the loader's dispatch, so they work for every device).
#define TRUENO_VK_INSTANCE_FUNCTIONS(X)                                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                        \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties)   \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)     \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkDeviceWaitIdle) X(vkCreateBuffer) X(vkDestroyBuffer)            \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory)  \
  X(vkUnmapMemory) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)          \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                     \
  X(vkCreatePipelineCache) X(vkDestroyPipelineCache) X(vkGetPipelineCacheData) X(vkCreateComputePipelines) \
  X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkResetDescriptorPool)        \
  X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool)      \
  X(vkAllocateCommandBuffers) X(vkFreeCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer)         \
  X(vkResetCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants)             \
  X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkQueueSubmit)          \
  X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences)

struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define TRUENO_VK_MEMBER(fn) PFN_##fn fn = nullptr;
  TRUENO_VK_INSTANCE_FUNCTIONS(TRUENO_VK_MEMBER)
#undef TRUENO_VK_MEMBER
  // Optional (nullptr when the loader does not know it): the NV cooperative-matrix shapes.
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  std::uint32_t instance_version = 0;  // VK_MAKE_API_VERSION of the loader
  std::string library;                 // the file that was loaded
};

// The loaded loader with its instance (Vulkan 1.1), or nullptr with *why: "no Vulkan loader: libvulkan.so.1:
// cannot open shared object file ...", "Vulkan loader ... is 1.0; trueno needs 1.1", "vkCreateInstance:
// VK_ERROR_INCOMPATIBLE_DRIVER". TRUENO_VULKAN_LOADER=path overrides the library (tests use it).
const Api* api(std::string* why = nullptr);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or "VkResult -1000069000" for a code this build does not name.
std::string result_name(VkResult r);
// Throws VulkanError "<call>: <result name>" unless r is VK_SUCCESS.
void check(VkResult r, const char* call);

// "1.3.230"
std::string version_string(std::uint32_t api_version);

}  // namespace trueno::vulkan
