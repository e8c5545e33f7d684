#pragma once
// The Vulkan device's life and memory: creation on an adapter, buffers in
// device-local memory, transfers through a staging buffer, synchronisation.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/device.hpp>

#include <roster/env.hpp>

#include <algorithm>
#include <cstring>
#include <optional>

namespace roster::vulkan {

using namespace detail;

ROSTER_INLINE expected<void> device::init() {
  validation_seen_ = vlog().errors.load(std::memory_order_acquire);
  const auto& props = p_.props;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = p_.queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkPhysicalDeviceFeatures features{};
  features.shaderFloat64 = p_.info.f64 ? VK_TRUE : VK_FALSE;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.pEnabledFeatures = &features;
  ROSTER_IMPL_VK_CALL(where("open"), vkCreateDevice, p_.handle, &info, nullptr, &device_);
  fn_.vkGetDeviceQueue(device_, p_.queue_family, 0, &queue_);

  max_range_ = props.limits.maxStorageBufferRange;
  // Test knob: ROSTER_VULKAN_MAX_RANGE caps the bytes one descriptor spans, so
  // the chunking that large buffers need runs at small sizes too.
  auto cap = env::whole_number("ROSTER_VULKAN_MAX_RANGE", 16, 0xffffffffull);
  if (!cap) return std::move(cap).error().prepend("vulkan");
  if (*cap) max_range_ = std::min<VkDeviceSize>(max_range_, **cap);
  if (auto ok = make_pipelines(); !ok) return ok;

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = p_.queue_family;
  ROSTER_IMPL_VK_CALL(where("open"), vkCreateCommandPool, device_, &pool_info, nullptr, &command_pool_);
  if (p_.timestamp_bits != 0) {
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 2;
    ROSTER_IMPL_VK_CALL(where("open"), vkCreateQueryPool, device_, &query_info, nullptr, &query_pool_);
  }
  return check("open");
}

ROSTER_INLINE void device::destroy() noexcept {
  if (device_ == VK_NULL_HANDLE) return;
  // A destructor cannot report: on failure (a lost device) there is nothing
  // left to wait for, and destroying proceeds either way.
  (void)fn_.vkDeviceWaitIdle(device_);
  for (auto& s : submissions_) {
    if (s.fence) fn_.vkDestroyFence(device_, s.fence, nullptr);
    if (s.pool) fn_.vkDestroyDescriptorPool(device_, s.pool, nullptr);
  }
  submissions_.clear();
  for (auto& [slot, b] : buffers_) free_buffer(b);
  buffers_.clear();
  for (auto& b : partials_) free_buffer(b);
  if (staging_map_ != nullptr) fn_.vkUnmapMemory(device_, staging_.memory);
  free_buffer(staging_);
  if (query_pool_) fn_.vkDestroyQueryPool(device_, query_pool_, nullptr);
  if (command_pool_) fn_.vkDestroyCommandPool(device_, command_pool_, nullptr);
  for (auto& set : pipelines_)
    for (int v = 0; v < 2; ++v) {
      for (auto p : set.stream[v])
        if (p) fn_.vkDestroyPipeline(device_, p, nullptr);
      for (auto p : set.dot[v])
        if (p) fn_.vkDestroyPipeline(device_, p, nullptr);
    }
  for (auto& [entry, u] : user_pipelines_) {
    if (u.pipeline) fn_.vkDestroyPipeline(device_, u.pipeline, nullptr);
    if (u.layout) fn_.vkDestroyPipelineLayout(device_, u.layout, nullptr);
    if (u.set_layout) fn_.vkDestroyDescriptorSetLayout(device_, u.set_layout, nullptr);
  }
  user_pipelines_.clear();
  if (pipeline_layout_) fn_.vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
  if (set_layout_) fn_.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  fn_.vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

ROSTER_INLINE expected<VkDeviceMemory> device::allocate_memory(VkBuffer buffer, VkMemoryPropertyFlags want,
                                                        VkMemoryPropertyFlags prefer, std::string_view what) {
  VkMemoryRequirements req{};
  fn_.vkGetBufferMemoryRequirements(device_, buffer, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  instance().fn.vkGetPhysicalDeviceMemoryProperties(p_.handle, &mem);
  std::optional<std::uint32_t> chosen;
  for (int pass = 0; pass < 2 && !chosen; ++pass) {
    const VkMemoryPropertyFlags flags = pass == 0 ? want | prefer : want;
    for (std::uint32_t i = 0; i < mem.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & flags) == flags) {
        chosen = i;
        break;
      }
  }
  if (!chosen)
    return make_error(errc::unsupported, where(what) + ": no memory type with the properties a buffer needs",
                      "pick another adapter with ROSTER_DEVICE_SELECTOR; this driver offers no suitable memory");
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = req.size;
  info.memoryTypeIndex = *chosen;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  ROSTER_IMPL_VK_CALL(where(what), vkAllocateMemory, device_, &info, nullptr, &memory);
  return memory;
}

ROSTER_INLINE expected<void> device::make_buffer(VkDeviceSize bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                                          VkMemoryPropertyFlags prefer, vk_buffer& out, std::string_view what) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ROSTER_IMPL_VK_CALL(where(what), vkCreateBuffer, device_, &info, nullptr, &out.buffer);
  auto memory = allocate_memory(out.buffer, want, prefer, what);
  if (!memory) {
    fn_.vkDestroyBuffer(device_, out.buffer, nullptr);
    out.buffer = VK_NULL_HANDLE;
    return std::move(memory).error();
  }
  out.memory = *memory;
  out.bytes = bytes;
  if (VkResult r = fn_.vkBindBufferMemory(device_, out.buffer, out.memory, 0); r != VK_SUCCESS) {
    free_buffer(out);
    return vk_failure(where(what), "vkBindBufferMemory", r);
  }
  return {};
}

ROSTER_INLINE void device::free_buffer(vk_buffer& b) {
  if (b.buffer) fn_.vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory) fn_.vkFreeMemory(device_, b.memory, nullptr);
  b = vk_buffer{};
}

ROSTER_INLINE expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  std::lock_guard lock(mutex_);
  const VkDeviceSize bytes = static_cast<VkDeviceSize>(n) * size_of(t);
  vk_buffer b;
  const std::string what = "allocate: " + std::to_string(n) + " " + std::string(to_string(t)) + " elements";
  if (auto ok = make_buffer(bytes,
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, b, what);
      !ok)
    return std::move(ok).error();
  b.type = t;
  b.size = n;
  const std::uint32_t slot = next_slot_++;  // never reused: a released handle stays invalid
  buffers_.emplace(slot, b);
  if (auto ok = check("allocate"); !ok) return std::move(ok).error();
  return slot;
}

ROSTER_INLINE expected<void> device::do_release(std::uint32_t slot) {
  std::lock_guard lock(mutex_);
  // Work in flight, roster's or a user's (native.hpp), may still read the buffer.
  if (auto ok = drain(); !ok) return ok;
  auto it = buffers_.find(slot);
  if (it == buffers_.end()) return {};
  free_buffer(it->second);
  buffers_.erase(it);
  return check("release");
}

ROSTER_INLINE expected<void> device::reap(bool wait_all) {
  for (auto& s : submissions_) {
    if (!s.in_flight) continue;
    VkResult r = wait_all ? fn_.vkWaitForFences(device_, 1, &s.fence, VK_TRUE, UINT64_MAX)
                          : fn_.vkGetFenceStatus(device_, s.fence);
    if (r == VK_NOT_READY) continue;
    if (r != VK_SUCCESS) return vk_failure(where("synchronize"), wait_all ? "vkWaitForFences" : "vkGetFenceStatus", r);
    s.in_flight = false;
  }
  return {};
}

ROSTER_INLINE expected<void> device::drain() {
  // The queue's idle covers command buffers a user submitted on it through
  // the native handles, which no fence of roster's tracks.
  ROSTER_IMPL_VK_CALL(where("synchronize"), vkQueueWaitIdle, queue_);
  return reap(true);
}

ROSTER_INLINE expected<void> device::synchronize() {
  std::lock_guard lock(mutex_);
  if (auto ok = drain(); !ok) return ok;
  return check("synchronize");
}

ROSTER_INLINE expected<void> device::ensure_staging(std::string_view transfer) {
  if (staging_.buffer != VK_NULL_HANDLE) return {};
  const std::string what = std::string(transfer) + ": the staging buffer";
  if (auto ok = make_buffer(staging_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT, staging_, what);
      !ok)
    return ok;
  ROSTER_IMPL_VK_CALL(where(what), vkMapMemory, device_, staging_.memory, 0, VK_WHOLE_SIZE, 0, &staging_map_);
  return {};
}

ROSTER_INLINE expected<void> device::transfer(const buffer& b, void* host, bool upload) {
  std::lock_guard lock(mutex_);
  const char* what = upload ? "upload" : "download";
  if (auto ok = ensure_staging(what); !ok) return ok;
  const vk_buffer& dev = buffers_.at(b.slot);
  auto* bytes = static_cast<std::uint8_t*>(host);
  for (VkDeviceSize done = 0; done < dev.bytes;) {
    const VkDeviceSize count = std::min<VkDeviceSize>(staging_bytes, dev.bytes - done);
    auto s = begin_submission(0);
    if (!s) return std::move(s).error();
    VkCommandBuffer cmd = (*s)->cmd;
    // The staging buffer is free: every earlier round was waited for.
    if (upload) std::memcpy(staging_map_, bytes + done, count);
    full_barrier(fn_, cmd, work_stages, work_writes | VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy region{upload ? 0 : done, upload ? done : 0, count};
    fn_.vkCmdCopyBuffer(cmd, upload ? staging_.buffer : dev.buffer, upload ? dev.buffer : staging_.buffer, 1, &region);
    if (!upload)
      full_barrier(fn_, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    if (auto ok = submit(**s); !ok) return ok;
    if (auto ok = reap(true); !ok) return ok;
    if (!upload) std::memcpy(bytes + done, staging_map_, count);
    done += count;
  }
  return check(what);
}

}  // namespace roster::vulkan
