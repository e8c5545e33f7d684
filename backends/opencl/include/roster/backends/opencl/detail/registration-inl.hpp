#pragma once
// The OpenCL backend's entry points, enumerate and open, and its registration.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/device.hpp>

#include <memory>
#include <string>

namespace roster::opencl {

ROSTER_INLINE expected<std::vector<adapter_info>> backend::enumerate() {
  // No loader: nothing to list. A ROSTER_OPENCL_LOADER refused before
  // dlopen (a FIFO, a folder) is the user's mistake: said, not hidden.
  if (const auto& failure = detail::loader().failure) {
    if (failure->code() != errc::unavailable) return *failure;
    return std::vector<adapter_info>{};
  }
  auto devices = detail::physical_devices();
  if (!devices) return std::move(devices).error();
  std::vector<adapter_info> out;
  out.reserve(devices->size());
  for (auto& p : *devices) out.push_back(std::move(p.info));
  return out;
}

ROSTER_INLINE expected<std::unique_ptr<device>> backend::open(open_key, std::uint32_t ordinal) {
  const std::string spec = "opencl:" + std::to_string(ordinal);
  auto devices = detail::physical_devices();
  if (!devices) return std::move(devices).error().prepend(spec);
  if (auto ok = check_adapter_ordinal(
          spec, "OpenCL", devices->size(), ordinal,
          "the OpenCL ICD loader finds no platform with an OpenCL 1.2 device on this host",
          "install an OpenCL driver (Debian: pocl-opencl-icd for the CPU, or the GPU vendor's) so that "
          "an ICD file names it in /etc/OpenCL/vendors (or in the folder OCL_ICD_VENDORS names), " +
              std::string(detail::exclude_hint));
      !ok)
    return std::move(ok).error();
  auto d = std::make_unique<device>(std::move((*devices)[ordinal]));
  if (auto ok = d->init(); !ok) return std::move(ok).error();
  return d;
}

}  // namespace roster::opencl

// Its built-in ops become kernel entries with no entry point of their own: a
// call of one runs as a step of the backend's own passes (device::dispatch
// maps it onto the built-in step).
ROSTER_REGISTER_BACKEND(roster::opencl::backend);

// This file compiles the backend: say so to the linker (<roster/backend.hpp>).
ROSTER_IMPL_DEFINE_BODIES(opencl);
