#pragma once
// The native handles (roster/backends/vulkan/native.hpp): the Vulkan objects
// behind a device and its buffers, and the submission of a user's command
// buffer on roster's queue, ordered with roster's work.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/device.hpp>

#include <algorithm>

namespace roster::vulkan {

using namespace detail;

ROSTER_INLINE expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind == code_load::native_id) {  // roster::kernels_loaded: made at open
    *static_cast<code_load*>(out) = loaded_;
    return true;
  }
  if (kind != native::native_id) return false;
  native n;
  n.instance = instance().instance;
  n.physical_device = p_.handle;
  n.device = device_;
  n.queue = queue_;
  n.queue_family = p_.queue_family;
  n.api_version = std::min<std::uint32_t>(p_.props.apiVersion, VK_API_VERSION_1_3);  // the instance asks for 1.3
  n.get_instance_proc_addr = instance().fn.vkGetInstanceProcAddr;
  n.queue_mutex = &mutex_;
  n.dev = this;
  *static_cast<native*>(out) = n;
  return true;
}

ROSTER_INLINE expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(b.slot);
  if (it == buffers_.end())
    return make_error(errc::invalid_argument, "the buffer was released", "allocate a new buffer");
  const vk_buffer& v = it->second;
  native::buffer n;
  n.buffer = v.buffer;
  n.offset = 0;
  n.size = v.bytes;
  n.memory = v.memory;
  n.type = v.type;
  n.elements = v.size;
  *static_cast<native::buffer*>(out) = n;
  return true;
}

ROSTER_INLINE expected<void> device::submit_native(VkCommandBuffer cmd) {
  if (cmd == VK_NULL_HANDLE)
    return make_error(errc::invalid_argument, where("native submit") + ": the command buffer is null",
                      "pass a command buffer you recorded and ended (vkEndCommandBuffer)");
  std::lock_guard lock(mutex_);
  if (native_barrier_ == VK_NULL_HANDLE) {
    // Recorded once and submitted before each user command buffer: roster's
    // earlier writes (shaders and transfers) complete and become visible to
    // every stage of the user's work. roster's own command buffers begin with
    // the matching barrier the other way (dispatch.cpp, device.cpp).
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = command_pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer barrier = VK_NULL_HANDLE;
    ROSTER_IMPL_VK_CALL(where("native submit"), vkAllocateCommandBuffers, device_, &info, &barrier);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    ROSTER_IMPL_VK_CALL(where("native submit"), vkBeginCommandBuffer, barrier, &begin);
    full_barrier(fn_, barrier, work_stages, work_writes, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                 VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    ROSTER_IMPL_VK_CALL(where("native submit"), vkEndCommandBuffer, barrier);
    native_barrier_ = barrier;
  }
  const VkCommandBuffer cmds[2] = {native_barrier_, cmd};
  VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.commandBufferCount = 2;
  info.pCommandBuffers = cmds;
  // No fence: synchronize() and release wait for the whole queue (drain()).
  ROSTER_IMPL_VK_CALL(where("native submit"), vkQueueSubmit, queue_, 1, &info, VK_NULL_HANDLE);
  return check("native submit");
}

ROSTER_INLINE expected<void> native::submit(VkCommandBuffer cmd) const {
  if (dev == nullptr)
    return make_error(errc::invalid_argument, "vulkan: native submit: these native handles hold no device",
                      "get them with roster::native<roster::vulkan::native>(dev)");
  return dev->submit_native(cmd);
}

}  // namespace roster::vulkan
