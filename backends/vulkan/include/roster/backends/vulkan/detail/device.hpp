#pragma once
// Private: the Vulkan device, an opened adapter. Its definitions are split by
// job: device.cpp (creation, buffers, transfers, synchronisation),
// pipelines.cpp (shaders and pipelines), dispatch.cpp (command recording).

#include <roster/backends/vulkan/detail/adapters.hpp>

#include <roster/backends/vulkan/native.hpp>
#include <roster/kernels.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace roster::vulkan {
namespace detail {

inline constexpr std::uint32_t group_size = 256;         // local_size_x of every shader
inline constexpr std::uint32_t max_dot_groups = 2048;    // partial sums per dot chunk on a GPU
inline constexpr std::uint32_t max_dot_groups_cpu = 64;  // on a CPU device (lavapipe), where each
                                                         // workgroup barrier is costly
inline constexpr std::size_t staging_bytes = 64ull << 20;  // reused for upload and download
inline constexpr std::size_t max_in_flight = 8;

struct push_constants {
  std::uint32_t n;
  std::uint32_t base;
  union {
    float f;
    double d;
  } s;
};
static_assert(sizeof(push_constants) == 16);

struct vk_buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize bytes = 0;
  element_type type = element_type::f32;
  std::size_t size = 0;
};

struct vk_submission {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  std::uint32_t pool_sets = 0;
  bool in_flight = false;
};

// Push constants of a user kernel: uint extent at 0, then each scalar in
// signature order at its natural alignment (docs/kernels.md).
inline std::uint32_t user_push_bytes(std::span<const kernel_param> signature) {
  std::uint32_t offset = 4;
  for (const auto& p : signature) {
    if (p.is_buffer) continue;
    const std::uint32_t size = p.scalar == scalar_type::f64 ? 8 : 4;
    offset = (offset + size - 1) / size * size + size;
  }
  return (offset + 7) / 8 * 8;
}

/// Records a memory barrier from `src` to `dst` stages for the whole queue.
inline void full_barrier(const vk_fns& fn, VkCommandBuffer cmd, VkPipelineStageFlags src, VkAccessFlags src_access,
                         VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  fn.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}
inline constexpr VkPipelineStageFlags work_stages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
inline constexpr VkAccessFlags work_writes = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
inline constexpr VkAccessFlags shader_rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;

}  // namespace detail

/// One opened Vulkan adapter: a queue, buffers in device-local memory, a
/// staging buffer for transfers, and compute pipelines for every op.
class device final : public roster::device {
 public:
  explicit device(detail::physical p) : p_(std::move(p)), fn_(detail::instance().fn) {}
  ~device() override { destroy(); }

  [[nodiscard]] const adapter_info& adapter() const noexcept override { return p_.info; }
  [[nodiscard]] device_caps caps() const noexcept override {
    return device_caps{false, p_.info.f64, op_set::all()};
  }

  expected<void> init();
  expected<void> synchronize() override;
  expected<void> dispatch_steps(std::span<const step> steps) override;
  expected<duration_ns> timed_dispatch_steps(std::span<const step> steps) override;
  /// Submits a user's command buffer after a barrier that makes roster's writes visible to it.
  expected<void> submit_native(VkCommandBuffer cmd);

 protected:
  expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override;
  expected<void> do_release(std::uint32_t slot) override;
  bool owns(const buffer& b) const noexcept override {
    std::lock_guard lock(mutex_);
    auto it = buffers_.find(b.slot);
    return it != buffers_.end() && it->second.type == b.type && it->second.size == b.size;
  }
  expected<void> do_upload(const buffer& b, const void* src) override { return transfer(b, const_cast<void*>(src), true); }
  expected<void> do_download(const buffer& b, void* dst) override { return transfer(b, dst, false); }
  expected<bool> do_native(std::uint64_t kind, void* out) override;
  expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override;

 private:
  // [0]: one element per invocation; [1]: a 16-byte vector per invocation.
  struct pipeline_set {
    VkPipeline stream[2][6] = {};  // fill .. nstream
    VkPipeline dot[2][2] = {};     // partial, final ([1][1] unused)
  };
  struct spirv {
    const std::uint32_t* code;
    std::size_t bytes;
  };

  // A user kernel's pipeline (roster/kernels.hpp): created at its first call,
  // kept until the device closes.
  struct user_pipeline {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::uint32_t buffers = 0;
    std::uint32_t push_bytes = 0;
  };

  std::string where(std::string_view call) const { return p_.info.spec() + ": " + std::string(call); }
  expected<void> check(std::string_view call) { return detail::check_validation(validation_seen_, where(call)); }
  expected<VkDeviceMemory> allocate_memory(VkBuffer buffer, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer,
                                           std::string_view what);
  expected<void> make_buffer(VkDeviceSize bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                             VkMemoryPropertyFlags prefer, detail::vk_buffer& out, std::string_view what);
  void free_buffer(detail::vk_buffer& b);
  expected<void> make_pipelines();
  expected<void> make_pipelines(const spirv (&modules)[4], pipeline_set& out);
  std::size_t width(element_type t) const { return vectors_ ? (t == element_type::f32 ? 4 : 2) : 1; }
  std::uint32_t unit_groups(element_type t) const;
  expected<detail::vk_submission*> begin_submission(std::uint32_t sets);
  expected<void> submit(detail::vk_submission& s);
  expected<void> reap(bool wait_all);
  // Waits for everything on the queue, roster's work and a user's alike.
  expected<void> drain();
  expected<void> record(detail::vk_submission& s, std::span<const step> steps, bool timed);
  expected<void> record_stream(detail::vk_submission& s, const step& st);
  expected<void> record_dot(detail::vk_submission& s, const step& st);
  expected<void> dispatch_one(detail::vk_submission& s, VkPipeline pipeline, const VkDescriptorBufferInfo (&infos)[4],
                              const detail::push_constants& pc, std::uint32_t groups);
  expected<void> ensure_partials(std::size_t count, element_type t);
  expected<void> ensure_staging(std::string_view transfer);
  expected<void> transfer(const buffer& b, void* host, bool upload);
  std::size_t chunk_elements(element_type t) const;
  std::uint32_t groups_for(std::size_t n, std::uint32_t cap) const;
  std::uint32_t sets_needed(std::span<const step> steps) const;
  std::size_t dot_partials(std::size_t n, element_type t) const;
  std::uint32_t dot_groups(std::size_t count, element_type t) const;
  expected<void> prepare(std::span<const step> steps);
  expected<const user_pipeline*> user_pipeline_for(const kernel_entry& entry);
  expected<void> record_call(detail::vk_submission& s, const kernel_call& call);
  void destroy() noexcept;

  detail::physical p_;
  const detail::vk_fns& fn_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  pipeline_set pipelines_[2];  // f32, f64
  code_load loaded_;           // how long the pipelines took (roster::kernels_loaded)
  int pipelines_made_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer native_barrier_ = VK_NULL_HANDLE;  // recorded once: roster's writes before a user's work
  std::vector<detail::vk_submission> submissions_;
  std::unordered_map<std::uint32_t, detail::vk_buffer> buffers_;
  std::unordered_map<const kernel_entry*, user_pipeline> user_pipelines_;
  std::uint32_t next_slot_ = 1;
  detail::vk_buffer partials_[2];  // per element type
  detail::vk_buffer staging_;
  void* staging_map_ = nullptr;
  bool staging_coherent_ = true;
  VkDeviceSize max_range_ = 0;  // bytes one descriptor may span
  bool vectors_ = true;         // 16-byte loads for the bulk of each chunk
  std::uint64_t validation_seen_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace roster::vulkan
