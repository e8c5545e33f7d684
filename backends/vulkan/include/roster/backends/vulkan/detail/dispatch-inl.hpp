#pragma once
// Command recording: submissions (command buffer, fence, descriptor pool),
// the chunking of steps into descriptor-sized ranges, and the recording of a
// program's steps as compute dispatches with barriers between them.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/device.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace roster::vulkan {

using namespace detail;

ROSTER_INLINE expected<vk_submission*> device::begin_submission(std::uint32_t sets) {
  if (auto ok = reap(false); !ok) return std::move(ok).error();
  vk_submission* s = nullptr;
  for (auto& x : submissions_)
    if (!x.in_flight) {
      s = &x;
      break;
    }
  if (s == nullptr && submissions_.size() >= max_in_flight) {
    // Wait for the oldest: all fences, simplest and rare.
    if (auto ok = reap(true); !ok) return std::move(ok).error();
    s = &submissions_.front();
  }
  if (s == nullptr) {
    submissions_.emplace_back();
    s = &submissions_.back();
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = command_pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    ROSTER_IMPL_VK_CALL(where("dispatch"), vkAllocateCommandBuffers, device_, &info, &s->cmd);
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    ROSTER_IMPL_VK_CALL(where("dispatch"), vkCreateFence, device_, &fence_info, nullptr, &s->fence);
  }
  if (sets > 0) {
    if (s->pool != VK_NULL_HANDLE && s->pool_sets < sets) {
      fn_.vkDestroyDescriptorPool(device_, s->pool, nullptr);
      s->pool = VK_NULL_HANDLE;
    }
    if (s->pool == VK_NULL_HANDLE) {
      const std::uint32_t capacity = std::max<std::uint32_t>(sets, 16);
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4 * capacity};
      VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      info.maxSets = capacity;
      info.poolSizeCount = 1;
      info.pPoolSizes = &size;
      ROSTER_IMPL_VK_CALL(where("dispatch"), vkCreateDescriptorPool, device_, &info, nullptr, &s->pool);
      s->pool_sets = capacity;
    } else {
      ROSTER_IMPL_VK_CALL(where("dispatch"), vkResetDescriptorPool, device_, s->pool, 0);
    }
  }
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkResetCommandBuffer, s->cmd, 0);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkBeginCommandBuffer, s->cmd, &begin);
  return s;
}

ROSTER_INLINE expected<void> device::submit(vk_submission& s) {
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkEndCommandBuffer, s.cmd);
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkResetFences, device_, 1, &s.fence);
  VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.commandBufferCount = 1;
  info.pCommandBuffers = &s.cmd;
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkQueueSubmit, queue_, 1, &info, s.fence);
  s.in_flight = true;
  return {};
}

ROSTER_INLINE std::size_t device::chunk_elements(element_type t) const {
  const std::size_t e = size_of(t);
  // Chunks start 16-byte aligned, so the vector pipelines see whole vectors.
  const std::size_t align = std::max<std::size_t>({p_.props.limits.minStorageBufferOffsetAlignment, e, 16});
  std::size_t bytes = static_cast<std::size_t>(std::min<VkDeviceSize>(max_range_, 0xffffffffull));
  bytes = std::max(bytes / align * align, align);
  // Keep indices in the shader (uint) far from wrapping.
  return std::min<std::size_t>(bytes / e, std::size_t{1} << 30);
}

ROSTER_INLINE std::uint32_t device::groups_for(std::size_t n, std::uint32_t cap) const {
  const std::size_t want = (n + group_size - 1) / group_size;
  const std::size_t limit = std::min<std::size_t>(cap, p_.props.limits.maxComputeWorkGroupCount[0]);
  return static_cast<std::uint32_t>(std::clamp<std::size_t>(want, 1, limit));
}

ROSTER_INLINE std::uint32_t device::sets_needed(std::span<const step> steps) const {
  std::uint32_t sets = 0;
  for (const auto& s : steps) {
    if (s.op == op::call) {  // one set; the pool holds 4 descriptors per set
      if (auto e = kernel_for(*s.call); e)
        if (const step b = builtin_step(**e, *s.call); b.op != op::call) {  // recorded as its built-in step
          sets += sets_needed(std::span<const step>(&b, 1));
          continue;
        }
      sets += static_cast<std::uint32_t>(std::max<std::size_t>(1, (s.call->buffers.size() + 3) / 4));
      continue;
    }
    if (buffers_of(s.op) == 0) continue;
    const std::size_t n = s.op == op::dot ? s.in1.size : s.out.size;
    const std::size_t chunk = chunk_elements(s.out.type);
    // Per chunk a bulk and a tail dispatch at most; a dot adds its final sum.
    sets += 2 * static_cast<std::uint32_t>((n + chunk - 1) / chunk) + (s.op == op::dot ? 1 : 0);
  }
  return sets;
}

// Partial sums a dot dispatch's slice holds come in multiples of this, so
// the next slice starts at an aligned offset (extra groups add zero).
ROSTER_INLINE std::uint32_t device::unit_groups(element_type t) const {
  const std::size_t e = size_of(t);
  return static_cast<std::uint32_t>(std::max<std::size_t>(1, p_.props.limits.minStorageBufferOffsetAlignment / e));
}

// Workgroups of the dot dispatch over `count` T elements, rounded to the unit.
ROSTER_INLINE std::uint32_t device::dot_groups(std::size_t count, element_type t) const {
  const std::uint32_t unit = unit_groups(t);
  const std::uint32_t groups =
      groups_for(count, p_.info.type == device_type::cpu ? max_dot_groups_cpu : max_dot_groups);
  return (groups + unit - 1) / unit * unit;
}

// Partial sums of a dot over n elements: per chunk, the vector bulk's groups
// and, where the chunk leaves a scalar tail, one unit more.
ROSTER_INLINE std::size_t device::dot_partials(std::size_t n, element_type t) const {
  const std::size_t chunk = chunk_elements(t), w = width(t);
  std::size_t total = 0;
  for (std::size_t c = 0; c * chunk < n; ++c) {
    const std::size_t count = std::min(chunk, n - c * chunk);
    if (count / w > 0) total += dot_groups(count / w, t);
    if (count % w != 0) total += unit_groups(t);
  }
  return total;
}

// Checks the element type and sizes the dot scratch for the largest dot.
ROSTER_INLINE expected<void> device::prepare(std::span<const step> steps) {
  for (const auto& st : steps) {
    if (st.op == op::call) {  // a user kernel: its pipeline, built at its first call
      auto entry = kernel_for(*st.call);
      if (!entry) return std::move(entry).error().prepend(where("dispatch"));
      // A built-in entry runs as its built-in step (record_call): that step's needs.
      if (const step b = builtin_step(**entry, *st.call); b.op != op::call) {
        if (auto ok = prepare(std::span<const step>(&b, 1)); !ok) return ok;
        continue;
      }
      if (auto u = user_pipeline_for(**entry); !u) return std::move(u).error();
      continue;
    }
    if (buffers_of(st.op) == 0) continue;
    if (st.out.type == element_type::f64 && !p_.info.f64)
      return make_error(errc::unsupported,
                        p_.info.spec() + ": dispatch: " + p_.info.name +
                            " has no shaderFloat64, so it runs no double program",
                        "use float buffers on this device, or pick an adapter whose f64 is true (roster-info)");
    if (st.op == op::dot)
      if (auto ok = ensure_partials(dot_partials(st.in1.size, st.out.type), st.out.type); !ok) return ok;
  }
  return {};
}

ROSTER_INLINE expected<void> device::ensure_partials(std::size_t count, element_type t) {
  vk_buffer& p = partials_[t == element_type::f64 ? 1 : 0];
  const VkDeviceSize bytes = static_cast<VkDeviceSize>(count) * size_of(t);
  if (p.buffer != VK_NULL_HANDLE && p.bytes >= bytes) return {};
  if (auto ok = reap(true); !ok) return ok;  // the old one may be in use
  free_buffer(p);
  return make_buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, p,
                     "dispatch");
}

namespace detail {
// The push constants of a step: the scalar in the element type's slot.
ROSTER_INLINE push_constants with_scalar(push_constants pc, element_type t, double scalar) {
  if (t == element_type::f64) pc.s.d = scalar;
  else pc.s.f = static_cast<float>(scalar);
  return pc;
}
}  // namespace detail

ROSTER_INLINE expected<void> device::record(vk_submission& s, std::span<const step> steps, bool timed) {
  VkCommandBuffer cmd = s.cmd;
  // Earlier submissions and transfers on this queue finish their writes first.
  full_barrier(fn_, cmd, work_stages, work_writes, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_rw);
  if (timed) {
    fn_.vkCmdResetQueryPool(cmd, query_pool_, 0, 2);
    fn_.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool_, 0);
  }
  bool first = true;
  for (const step& st : steps) {
    if (st.op != op::call && buffers_of(st.op) == 0) continue;
    if (!first)  // each step sees the previous one's writes
      full_barrier(fn_, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_rw);
    first = false;
    expected<void> ok = st.op == op::call ? record_call(s, *st.call)
                        : st.op == op::dot ? record_dot(s, st)
                                           : record_stream(s, st);
    if (!ok) return ok;
  }
  if (timed) fn_.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 1);
  return {};
}

// Binds four buffer ranges at bindings 0..3 and records one dispatch of a
// built-in pipeline.
ROSTER_INLINE expected<void> device::dispatch_one(vk_submission& s, VkPipeline pipeline, const VkDescriptorBufferInfo (&infos)[4],
                                    const push_constants& pc, std::uint32_t groups) {
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = s.pool;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &set_layout_;
  VkDescriptorSet set = VK_NULL_HANDLE;
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkAllocateDescriptorSets, device_, &alloc, &set);
  VkWriteDescriptorSet writes[4];
  for (std::uint32_t i = 0; i < 4; ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  fn_.vkUpdateDescriptorSets(device_, 4, writes, 0, nullptr);
  fn_.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  fn_.vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &set, 0, nullptr);
  fn_.vkCmdPushConstants(s.cmd, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  fn_.vkCmdDispatch(s.cmd, groups, 1, 1);
  return {};
}

// An element-wise step: each chunk's bulk as 16-byte vectors, then the
// scalar tail (fewer than w elements) from index bulk * w.
ROSTER_INLINE expected<void> device::record_stream(vk_submission& s, const step& st) {
  const int nb = buffers_of(st.op);
  const element_type t = st.out.type;
  const int ti = t == element_type::f64 ? 1 : 0;
  const std::size_t e = size_of(t), n = st.out.size, chunk = chunk_elements(t), w = width(t);
  const int vec = w > 1 ? 1 : 0, o = static_cast<int>(st.op);
  const vk_buffer& out = buffers_.at(st.out.slot);
  const vk_buffer& in1 = nb > 1 ? buffers_.at(st.in1.slot) : out;
  const vk_buffer& in2 = nb > 2 ? buffers_.at(st.in2.slot) : in1;
  for (std::size_t c = 0; c * chunk < n; ++c) {
    const VkDeviceSize offset = static_cast<VkDeviceSize>(c * chunk * e);
    const std::size_t count = std::min(chunk, n - c * chunk);
    const VkDeviceSize range = static_cast<VkDeviceSize>(count * e);
    const VkDescriptorBufferInfo infos[4] = {
        {out.buffer, offset, range}, {in1.buffer, offset, range}, {in2.buffer, offset, range},
        {out.buffer, offset, range}};
    const std::size_t bulk = count / w;
    if (bulk > 0) {
      push_constants pc{};
      pc.n = static_cast<std::uint32_t>(bulk);
      if (auto ok = dispatch_one(s, pipelines_[ti].stream[vec][o], infos, with_scalar(pc, t, st.scalar),
                                 groups_for(bulk, 1u << 30));
          !ok)
        return ok;
    }
    if (bulk * w < count) {
      if (bulk > 0)  // same bound range: keep the two dispatches ordered
        full_barrier(fn_, s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_rw);
      push_constants pc{};
      pc.n = static_cast<std::uint32_t>(count);
      pc.base = static_cast<std::uint32_t>(bulk * w);
      if (auto ok = dispatch_one(s, pipelines_[ti].stream[0][o], infos, with_scalar(pc, t, st.scalar), 1); !ok)
        return ok;
    }
  }
  return {};
}

// A dot: per-workgroup partial sums of every chunk into the scratch buffer
// (the bulk as vectors, then the tail), a barrier, then one workgroup sums
// the partials into r[0].
ROSTER_INLINE expected<void> device::record_dot(vk_submission& s, const step& st) {
  const element_type t = st.out.type;
  const int ti = t == element_type::f64 ? 1 : 0;
  const std::size_t e = size_of(t), n = st.in1.size, chunk = chunk_elements(t), w = width(t);
  const int vec = w > 1 ? 1 : 0;
  const vk_buffer& out = buffers_.at(st.out.slot);
  const vk_buffer& in1 = buffers_.at(st.in1.slot);
  const vk_buffer& in2 = buffers_.at(st.in2.slot);
  const vk_buffer& partial = partials_[ti];
  std::uint32_t base = 0;
  for (std::size_t c = 0; c * chunk < n; ++c) {
    const VkDeviceSize offset = static_cast<VkDeviceSize>(c * chunk * e);
    const std::size_t count = std::min(chunk, n - c * chunk);
    const VkDeviceSize range = static_cast<VkDeviceSize>(count * e);
    const std::size_t bulk = count / w;
    auto partial_dispatch = [&](VkPipeline pipeline, std::uint32_t groups, std::uint32_t end,
                                std::uint32_t start) -> expected<void> {
      const VkDescriptorBufferInfo slice{partial.buffer, static_cast<VkDeviceSize>(base) * e,
                                         static_cast<VkDeviceSize>(groups) * e};
      // Binding 0 (the result) is not touched in this phase: bind the
      // dispatch's own slice there, so no two dispatches' bindings overlap.
      const VkDescriptorBufferInfo infos[4] = {slice, {in1.buffer, offset, range}, {in2.buffer, offset, range}, slice};
      push_constants pc{};
      pc.n = end;
      pc.base = start;
      base += groups;
      return dispatch_one(s, pipeline, infos, with_scalar(pc, t, st.scalar), groups);
    };
    if (bulk > 0)
      if (auto ok = partial_dispatch(pipelines_[ti].dot[vec][0], dot_groups(bulk, t), static_cast<std::uint32_t>(bulk), 0);
          !ok)
        return ok;
    if (bulk * w < count)
      if (auto ok = partial_dispatch(pipelines_[ti].dot[0][0], unit_groups(t), static_cast<std::uint32_t>(count),
                                     static_cast<std::uint32_t>(bulk * w));
          !ok)
        return ok;
  }
  full_barrier(fn_, s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, shader_rw);
  const VkDescriptorBufferInfo whole{partial.buffer, 0, static_cast<VkDeviceSize>(base) * e};
  const VkDescriptorBufferInfo infos[4] = {{out.buffer, 0, e}, whole, whole, whole};
  push_constants pc{};
  pc.n = base;
  return dispatch_one(s, pipelines_[ti].dot[0][1], infos, with_scalar(pc, t, st.scalar), 1);
}

// A user kernel's call: its pipeline (prepare() built it), its buffers whole
// at bindings 0..n-1, the extent and scalars as push constants, and
// ceil(extent / local_size_x) workgroups.
ROSTER_INLINE expected<void> device::record_call(vk_submission& s, const kernel_call& c) {
  auto entry = kernel_for(c);  // the named variant, the recorded winner, or the default
  if (!entry) return std::move(entry).error().prepend(where("dispatch"));
  // A built-in entry (a call device::dispatch did not map, e.g. of another
  // element type than the program's built-in steps): its built-in step.
  if (const step b = builtin_step(**entry, c); b.op != op::call) return record(s, std::span<const step>(&b, 1), false);
  auto u = user_pipeline_for(**entry);
  if (!u) return std::move(u).error();
  // Buffers are bound, not passed: the arguments carry the converted scalars and the extent.
  call_arguments arguments;
  auto args = arguments.build(**entry, c, [](const buffer&) -> void* { return nullptr; }, false);
  if (!args) return std::move(args).error().prepend(where("dispatch"));
  const std::size_t* extent = &args->extent;
  auto what = [&] { return "kernel '" + c.op + "'"; };  // for errors only
  const std::uint32_t local = (*entry)->payload_as<shader>()->local_size_x;  // user_pipeline_for checked it
  const std::size_t groups = (*extent + local - 1) / local;
  if (*extent > 0xffffffffull || groups > p_.props.limits.maxComputeWorkGroupCount[0])
    return make_error(errc::unsupported,
                      where("dispatch") + ": " + what() + ": an extent of " + std::to_string(*extent) + " needs " +
                          std::to_string(groups) + " workgroups, the device dispatches at most " +
                          std::to_string(p_.props.limits.maxComputeWorkGroupCount[0]),
                      "raise the shader's local_size_x, or split the call into smaller extents");

  std::vector<VkDescriptorBufferInfo> infos;
  infos.reserve(c.buffers.size());
  for (const auto& b : c.buffers) {
    const vk_buffer& vb = buffers_.at(b.slot);
    const VkDeviceSize bytes = static_cast<VkDeviceSize>(b.size) * size_of(b.type);
    if (bytes > max_range_)
      return make_error(errc::unsupported,
                        where("dispatch") + ": " + what() + ": a buffer of " + std::to_string(bytes) +
                            " bytes is beyond one descriptor's range (" + std::to_string(max_range_) + ")",
                        "split the buffer, or use a backend without the limit for this kernel");
    infos.push_back({vb.buffer, 0, bytes});
  }
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = s.pool;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &(*u)->set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  ROSTER_IMPL_VK_CALL(where("dispatch"), vkAllocateDescriptorSets, device_, &alloc, &set);
  std::vector<VkWriteDescriptorSet> writes(infos.size());
  for (std::uint32_t i = 0; i < writes.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  fn_.vkUpdateDescriptorSets(device_, static_cast<std::uint32_t>(writes.size()), writes.data(), 0, nullptr);

  // Push constants: uint extent, then the scalars (see user_push_bytes).
  std::vector<unsigned char> push((*u)->push_bytes, 0);
  const auto n32 = static_cast<std::uint32_t>(*extent);
  std::memcpy(push.data(), &n32, 4);
  std::uint32_t offset = 4;
  for (const scalar_arg& a : args->scalars) {
    const std::uint32_t size = a.type == scalar_type::f64 ? 8 : 4;
    offset = (offset + size - 1) / size * size;
    switch (a.type) {
      case scalar_type::f32: std::memcpy(push.data() + offset, &a.f32, 4); break;
      case scalar_type::f64: std::memcpy(push.data() + offset, &a.f64, 8); break;
      case scalar_type::i32: std::memcpy(push.data() + offset, &a.i32, 4); break;
      case scalar_type::u32: std::memcpy(push.data() + offset, &a.u32, 4); break;
    }
    offset += size;
  }
  fn_.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, (*u)->pipeline);
  fn_.vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, (*u)->layout, 0, 1, &set, 0, nullptr);
  fn_.vkCmdPushConstants(s.cmd, (*u)->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (*u)->push_bytes, push.data());
  fn_.vkCmdDispatch(s.cmd, static_cast<std::uint32_t>(groups), 1, 1);
  return {};
}

ROSTER_INLINE expected<void> device::dispatch_steps(std::span<const step> steps) {
  std::lock_guard lock(mutex_);
  // The core refuses double buffers on a device without f64 at allocate and
  // dispatch; prepare() guards the wrapper paths (timed dispatch) too.
  if (auto ok = prepare(steps); !ok) return ok;
  auto s = begin_submission(sets_needed(steps));
  if (!s) return std::move(s).error();
  if (auto ok = record(**s, steps, false); !ok) return ok;
  if (auto ok = submit(**s); !ok) return ok;
  return check("dispatch");
}

ROSTER_INLINE expected<duration_ns> device::timed_dispatch_steps(std::span<const step> steps) {
  if (query_pool_ == VK_NULL_HANDLE) return roster::device::timed_dispatch_steps(steps);  // no timestamps: host clock
  if (auto ok = synchronize(); !ok) return std::move(ok).error();
  std::lock_guard lock(mutex_);
  if (auto ok = prepare(steps); !ok) return std::move(ok).error();
  auto s = begin_submission(sets_needed(steps));
  if (!s) return std::move(s).error();
  if (auto ok = record(**s, steps, true); !ok) return std::move(ok).error();
  if (auto ok = submit(**s); !ok) return std::move(ok).error();
  if (auto ok = reap(true); !ok) return std::move(ok).error();
  std::uint64_t stamps[2] = {};
  ROSTER_IMPL_VK_CALL(where("timed dispatch"), vkGetQueryPoolResults, device_, query_pool_, 0, 2, sizeof stamps,
                      stamps, sizeof stamps[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (auto ok = check("timed dispatch"); !ok) return std::move(ok).error();
  const std::uint64_t mask = p_.timestamp_bits >= 64 ? ~0ull : (1ull << p_.timestamp_bits) - 1;
  const std::uint64_t ticks = (stamps[1] - stamps[0]) & mask;
  const double ns = static_cast<double>(ticks) * static_cast<double>(p_.props.limits.timestampPeriod);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns + 0.5));
}

}  // namespace roster::vulkan
