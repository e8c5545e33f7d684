#pragma once
// Included after <roster/backends/vulkan.hpp>, by the backend's -inl files.
// Private: the Vulkan loader and the process-wide instance. The loader is
// dlopen'ed and every entry point the backend calls goes through one function
// table, so a program linked with this backend starts (and the backend lists
// nothing) on a host without libvulkan.so.1.

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>


#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::vulkan::detail {

// Function table: every entry point the backend calls, loaded through
// vkGetInstanceProcAddr from the dlopen'ed loader.
#define ROSTER_IMPL_VK_GLOBAL_FNS(X)    \
  X(vkEnumerateInstanceVersion)          \
  X(vkEnumerateInstanceLayerProperties)  \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkCreateInstance)

#define ROSTER_IMPL_VK_INSTANCE_FNS(X)        \
  X(vkDestroyInstance)                         \
  X(vkEnumeratePhysicalDevices)                \
  X(vkGetPhysicalDeviceProperties)             \
  X(vkGetPhysicalDeviceProperties2)            \
  X(vkGetPhysicalDeviceFeatures)               \
  X(vkGetPhysicalDeviceQueueFamilyProperties)  \
  X(vkGetPhysicalDeviceMemoryProperties)       \
  X(vkEnumerateDeviceExtensionProperties)      \
  X(vkCreateDevice)                            \
  X(vkGetDeviceProcAddr)

#define ROSTER_IMPL_VK_DEBUG_FNS(X)    \
  X(vkCreateDebugUtilsMessengerEXT)     \
  X(vkSubmitDebugUtilsMessageEXT)

#define ROSTER_IMPL_VK_DEVICE_FNS(X)  \
  X(vkDestroyDevice)                   \
  X(vkGetDeviceQueue)                  \
  X(vkCreateBuffer)                    \
  X(vkDestroyBuffer)                   \
  X(vkGetBufferMemoryRequirements)     \
  X(vkAllocateMemory)                  \
  X(vkFreeMemory)                      \
  X(vkBindBufferMemory)                \
  X(vkMapMemory)                       \
  X(vkUnmapMemory)                     \
  X(vkCreateShaderModule)              \
  X(vkDestroyShaderModule)             \
  X(vkCreateDescriptorSetLayout)       \
  X(vkDestroyDescriptorSetLayout)      \
  X(vkCreatePipelineLayout)            \
  X(vkDestroyPipelineLayout)           \
  X(vkCreateComputePipelines)          \
  X(vkDestroyPipeline)                 \
  X(vkCreateDescriptorPool)            \
  X(vkDestroyDescriptorPool)           \
  X(vkResetDescriptorPool)             \
  X(vkAllocateDescriptorSets)          \
  X(vkUpdateDescriptorSets)            \
  X(vkCreateCommandPool)               \
  X(vkDestroyCommandPool)              \
  X(vkAllocateCommandBuffers)          \
  X(vkFreeCommandBuffers)              \
  X(vkBeginCommandBuffer)              \
  X(vkEndCommandBuffer)                \
  X(vkResetCommandBuffer)              \
  X(vkCmdBindPipeline)                 \
  X(vkCmdBindDescriptorSets)           \
  X(vkCmdPushConstants)                \
  X(vkCmdDispatch)                     \
  X(vkCmdPipelineBarrier)              \
  X(vkCmdCopyBuffer)                   \
  X(vkCmdResetQueryPool)               \
  X(vkCmdWriteTimestamp)               \
  X(vkCreateQueryPool)                 \
  X(vkDestroyQueryPool)                \
  X(vkGetQueryPoolResults)             \
  X(vkCreateFence)                     \
  X(vkDestroyFence)                    \
  X(vkResetFences)                     \
  X(vkWaitForFences)                   \
  X(vkGetFenceStatus)                  \
  X(vkQueueSubmit)                     \
  X(vkQueueWaitIdle)                   \
  X(vkDeviceWaitIdle)

#define ROSTER_IMPL_VK_MEMBER(name) PFN_##name name = nullptr;

struct vk_fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  ROSTER_IMPL_VK_GLOBAL_FNS(ROSTER_IMPL_VK_MEMBER)
  ROSTER_IMPL_VK_INSTANCE_FNS(ROSTER_IMPL_VK_MEMBER)
  ROSTER_IMPL_VK_DEBUG_FNS(ROSTER_IMPL_VK_MEMBER)
  ROSTER_IMPL_VK_DEVICE_FNS(ROSTER_IMPL_VK_MEMBER)
};

// The process-wide instance: created once, on first use, never destroyed
// (devices cached in other statics may outlive any destructor order).
struct vk_instance {
  void* library = nullptr;
  vk_fns fn;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool validation = false;
  // Set when there is no loader or no driver: enumerate() lists nothing.
  bool absent = false;
  std::optional<roster::error> failure;
};

/// Returns the instance, loading the loader and creating it on first use.
const vk_instance& instance();

/// Below this many free bytes on the disk of Mesa's shader cache, roster
/// turns the cache off for the process (mesa_cache.cpp says why).
inline constexpr std::uint64_t mesa_cache_min_free = std::uint64_t{16} << 20;
/// Turns Mesa's shader cache off where its disk is (nearly) full; once,
/// before the first instance.
void guard_mesa_shader_cache() noexcept;

/// Returns a ROSTER_VULKAN_* flag (read with roster::env: 1/0, true/false,
/// yes/no, on/off), `unset` when it is unset or blank, or the error that
/// quotes a malformed value.
expected<bool> env_flag(const char* name, bool unset);

/// Returns the libraries to try as the Vulkan loader: ROSTER_VULKAN_LOADER,
/// which must name a regular file (a path) or be a plain library name, else
/// libvulkan.so.1 then libvulkan.so; an error for a path that is a folder, a
/// FIFO, a device or a socket, which dlopen would misread or block on.
expected<std::vector<std::string>> loader_names();

/// The part of a fix that names the way out: exclude the backend.
inline constexpr std::string_view exclude_hint = "or exclude the backend with ROSTER_DEVICE_SELECTOR='!vulkan:*'";

/// Turns a failed call into an error naming the Vulkan function and the
/// VkResult, with a fix that fits the result.
roster::error vk_failure(std::string_view where, std::string_view function, VkResult r);

/// Calls fn_.name(args...) and returns vk_failure(where, "name", result) when
/// it fails: the message names the Vulkan function, never the source text of
/// the call.
#define ROSTER_IMPL_VK_CALL(where, name, ...)                                    \
  do {                                                                          \
    if (VkResult roster_vk_r_ = fn_.name(__VA_ARGS__); roster_vk_r_ != VK_SUCCESS) \
      return ::roster::vulkan::detail::vk_failure(where, #name, roster_vk_r_);  \
  } while (0)

/// What the validation layer has reported in this process (never destroyed:
/// its callback may run at exit).
struct validation_log {
  std::mutex mutex;
  std::vector<std::string> messages;
  std::atomic<std::uint64_t> errors{0};
};
validation_log& vlog();

/// Returns an error when the validation layer reported something since
/// `seen`, and moves `seen` forward.
expected<void> check_validation(std::uint64_t& seen, std::string_view where);

}  // namespace roster::vulkan::detail
