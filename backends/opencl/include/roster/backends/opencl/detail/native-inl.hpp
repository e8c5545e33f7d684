#pragma once
// The native handles (roster/backends/opencl/native.hpp): the OpenCL objects
// behind a device and its buffers. A user's work on the queue is ordered with
// roster's by the queue itself (in order), so there is nothing to submit here.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/device.hpp>

#include <roster/backends/opencl/native.hpp>

namespace roster::opencl {

ROSTER_INLINE expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  native n;
  n.platform = p_.platform;
  n.device = p_.device;
  n.context = context_;
  n.queue = queue_;
  *static_cast<native*>(out) = n;
  return true;
}

ROSTER_INLINE expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  std::lock_guard lock(mutex_);
  auto it = buffers_.find(b.slot);
  if (it == buffers_.end())
    return make_error(errc::invalid_argument, where("native buffer") + ": the buffer was released",
                      "allocate a new buffer");
  native::buffer n;
  n.mem = it->second.mem;
  n.type = it->second.type;
  n.elements = it->second.size;
  *static_cast<native::buffer*>(out) = n;
  return true;
}

}  // namespace roster::opencl
