#pragma once
/// The Vulkan backend's native handles: the instance, physical device, device
/// and queue a roster device runs on, and the VkBuffer behind a roster buffer,
/// for a user's own compute shaders between roster's programs. Include it only
/// where you use Vulkan yourself: it brings in <vulkan/vulkan_core.h> (the
/// backend's other header does not). The ordering contract: docs/native.md.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/native.hpp>
#include <roster/program.hpp>

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace roster::vulkan {

/// An opened Vulkan adapter, declared by <roster/backends/vulkan.hpp>, which compiles
/// the backend (these handles' code too) in a ROSTER_SOURCE or
/// ROSTER_HEADER_ONLY file: include it there as well.
class device;

/// The handles behind a Vulkan device (roster::native<roster::vulkan::native>(dev)).
/// roster owns every handle: do not destroy them. The device was created with
/// one queue of queue_family, no extensions, and shaderFloat64 where the
/// adapter has it. Vulkan functions come from get_instance_proc_addr (roster
/// loads the loader itself and never links libvulkan).
struct native {
  static constexpr std::uint64_t native_id = native_id_of("roster::vulkan::native/1");
  static constexpr std::string_view backend = "vulkan";
  /// The handles behind one roster buffer (roster::native_buffer<roster::vulkan::native>(dev, buf)).
  struct buffer {
    VkBuffer buffer = VK_NULL_HANDLE;        ///< usage: storage, transfer source and destination
    VkDeviceSize offset = 0;                 ///< where the buffer's elements start in it
    VkDeviceSize size = 0;                   ///< bytes of the elements (elements * size_of(type))
    VkDeviceMemory memory = VK_NULL_HANDLE;  ///< device-local memory bound at offset 0
    element_type type = element_type::f32;
    std::size_t elements = 0;
  };

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  ///< roster's queue: every program, upload and download runs on it
  std::uint32_t queue_family = 0;  ///< its family, for a command pool of your own
  std::uint32_t api_version = 0;   ///< the Vulkan version usable on the device (instance and device agree)
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;  ///< loads every other Vulkan function
  std::mutex* queue_mutex = nullptr;  ///< guards the queue; lock_queue() takes it
  vulkan::device* dev = nullptr;      ///< the roster device these handles belong to (opaque)

  /// Submits a command buffer of yours on roster's queue, ordered with roster's
  /// work: everything roster submitted before is complete and its writes are
  /// visible to cmd, and roster's later programs, uploads and downloads see
  /// cmd's compute and transfer writes. roster::device::synchronize() waits
  /// for it. cmd must stay valid (and its resources alive) until then.
  [[nodiscard]] ROSTER_API expected<void> submit(VkCommandBuffer cmd) const;
  /// Locks roster's queue, for a vkQueueSubmit or vkQueueWaitIdle of your own
  /// (Vulkan requires the queue's calls to be externally synchronised). Hold
  /// it only around the call: roster's own calls on this device wait for it.
  [[nodiscard]] std::unique_lock<std::mutex> lock_queue() const { return std::unique_lock<std::mutex>(*queue_mutex); }
};

}  // namespace roster::vulkan
