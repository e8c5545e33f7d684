#pragma once
// The OpenCL device's life and memory: a context and an in-order queue on one
// adapter, buffers as cl_mem objects, blocking transfers on the queue (so they
// are ordered with the programs), synchronisation.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/device.hpp>

#include <roster/env.hpp>

#include <algorithm>
#include <bit>

namespace roster::opencl {

using namespace detail;

ROSTER_INLINE expected<void> device::init() {
  cl_int status = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(p_.platform),
                                         0};
  context_ = fn().clCreateContext(props, 1, &p_.device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) return cl_failure(where("open"), "clCreateContext", status);
  // Profiling on: timed_dispatch reads the kernels' own start and end times.
  if (p_.platform_version >= 20 && fn().clCreateCommandQueueWithProperties != nullptr) {
    const cl_queue_properties queue_props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    queue_ = fn().clCreateCommandQueueWithProperties(context_, p_.device, queue_props, &status);
  } else {
    queue_ = fn().clCreateCommandQueue(context_, p_.device, CL_QUEUE_PROFILING_ENABLE, &status);
  }
  if (status != CL_SUCCESS) return cl_failure(where("open"), "clCreateCommandQueue", status);

  // The largest power of two up to 256 that the device runs in one work-group.
  local_ = std::min<std::size_t>(group_size, std::bit_floor(std::max<std::size_t>(p_.max_work_group, 1)));
  // Enough work-groups to fill a GPU (16 per compute unit: 2048 on an H200,
  // as the Vulkan backend runs its dot) while the dot's partial sums stay few;
  // on a CPU (PoCL) each work-group is a thread's loop, so a few per core.
  const std::size_t per_unit = p_.info.type == device_type::cpu ? 4 : 16;
  dot_groups_ = std::clamp<std::size_t>(std::size_t{p_.info.compute_units} * per_unit, 1, max_dot_groups);
  // Test and tuning knob: ROSTER_OPENCL_VECTOR=0 moves one element per work-item and step.
  auto vectors = env::flag("ROSTER_OPENCL_VECTOR");
  if (!vectors) return std::move(vectors).error().prepend(where("open"));
  vector_bytes_ = vectors->value_or(true) ? 16 : 0;
  // Test knob: ROSTER_OPENCL_WIDE_INDEX=1 gives every kernel 64-bit indices,
  // which otherwise only steps of 2^31 elements or more get.
  auto wide = env::flag("ROSTER_OPENCL_WIDE_INDEX");
  if (!wide) return std::move(wide).error().prepend(where("open"));
  wide_index_ = wide->value_or(false);

  partials_ = fn().clCreateBuffer(context_, CL_MEM_READ_WRITE, max_dot_groups * sizeof(double), nullptr, &status);
  if (status != CL_SUCCESS) return cl_failure(where("open"), "clCreateBuffer", status);
  return {};
}

ROSTER_INLINE void device::destroy() noexcept {
  // A destructor cannot report: a failed finish (a lost device) leaves
  // nothing to wait for, and releasing proceeds either way.
  if (queue_ != nullptr) (void)fn().clFinish(queue_);
  auto release = [](built_kernel& b) {
    if (b.kernel != nullptr) (void)fn().clReleaseKernel(b.kernel);
    if (b.program != nullptr) (void)fn().clReleaseProgram(b.program);
    b = built_kernel{};
  };
  for (auto& [key, b] : passes_) release(b);
  passes_.clear();
  for (auto& b : dot_final_) release(b);
  for (auto& [entry, u] : user_kernels_) release(u.built);
  user_kernels_.clear();
  for (auto& [slot, b] : buffers_) (void)fn().clReleaseMemObject(b.mem);
  buffers_.clear();
  if (partials_ != nullptr) (void)fn().clReleaseMemObject(partials_);
  if (queue_ != nullptr) (void)fn().clReleaseCommandQueue(queue_);
  if (context_ != nullptr) (void)fn().clReleaseContext(context_);
  partials_ = nullptr, queue_ = nullptr, context_ = nullptr;
}

ROSTER_INLINE expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  std::lock_guard lock(mutex_);
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * size_of(t);
  const std::string what = std::to_string(n) + " " + std::string(to_string(t)) + " elements";
  if (bytes > p_.max_alloc)
    return make_error(errc::unsupported,
                      where("allocate") + ": " + what + " (" + std::to_string(bytes) +
                          " bytes) is beyond the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE, " +
                          std::to_string(p_.max_alloc) + " bytes)",
                      "allocate smaller buffers, or pick an adapter that allows larger ones (roster-info)");
  cl_int status = CL_SUCCESS;
  cl_mem mem = fn().clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (status != CL_SUCCESS) return cl_failure(where("allocate"), "clCreateBuffer", status).prepend(what);
  const std::uint32_t slot = next_slot_++;  // never reused: a released handle stays invalid
  buffers_.emplace(slot, cl_buffer{mem, t, n});
  return slot;
}

ROSTER_INLINE expected<void> device::do_release(std::uint32_t slot) {
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(slot);
  if (it == buffers_.end()) return {};
  // OpenCL keeps the memory until the commands that use it are done.
  const cl_mem mem = it->second.mem;
  buffers_.erase(it);
  ROSTER_IMPL_CL_CALL(where("release"), clReleaseMemObject, mem);
  return {};
}

// Blocking transfers on the queue: they run after every earlier command and
// return when the host memory may be reused (upload) or read (download).
ROSTER_INLINE expected<void> device::do_upload(const buffer& b, const void* src) {
  std::lock_guard lock(mutex_);
  const cl_buffer& m = buffers_.at(b.slot);
  ROSTER_IMPL_CL_CALL(where("upload"), clEnqueueWriteBuffer, queue_, m.mem, CL_TRUE, 0, m.size * size_of(m.type),
                      src, 0, nullptr, nullptr);
  return {};
}

ROSTER_INLINE expected<void> device::do_download(const buffer& b, void* dst) {
  std::lock_guard lock(mutex_);
  const cl_buffer& m = buffers_.at(b.slot);
  ROSTER_IMPL_CL_CALL(where("download"), clEnqueueReadBuffer, queue_, m.mem, CL_TRUE, 0, m.size * size_of(m.type),
                      dst, 0, nullptr, nullptr);
  return {};
}

ROSTER_INLINE expected<void> device::synchronize() {
  std::lock_guard lock(mutex_);
  ROSTER_IMPL_CL_CALL(where("synchronize"), clFinish, queue_);
  return {};
}

}  // namespace roster::opencl
