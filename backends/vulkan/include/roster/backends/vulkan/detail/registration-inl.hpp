#pragma once
// The Vulkan backend's registration: its entry points (open and
// enumerate), the registration itself and the anchor that keeps it linked.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/adapters.hpp>
#include <roster/backends/vulkan/detail/device.hpp>
#include <roster/backends/vulkan/detail/instance.hpp>

#include <memory>
#include <string>

namespace roster::vulkan {

ROSTER_INLINE expected<std::vector<adapter_info>> backend::enumerate() {
  const auto& v = detail::instance();
  if (v.failure && v.absent) return std::vector<adapter_info>{};  // no loader or driver: nothing to list
  auto devices = detail::physical_devices();
  if (!devices) return std::move(devices).error();
  std::vector<adapter_info> out;
  out.reserve(devices->size());
  for (auto& p : *devices) out.push_back(std::move(p.info));
  return out;
}

ROSTER_INLINE expected<std::unique_ptr<device>> backend::open(open_key, std::uint32_t ordinal) {
  const std::string spec = "vulkan:" + std::to_string(ordinal);
  auto devices = detail::physical_devices();
  if (!devices) return std::move(devices).error();  // it names the backend already
  if (auto ok = check_adapter_ordinal(
          spec, "Vulkan", devices->size(), ordinal, "no Vulkan 1.1 device with a compute queue on this host",
          "install a Vulkan driver (Debian: mesa-vulkan-drivers for lavapipe, or the NVIDIA driver), "
          "check VK_DRIVER_FILES / VK_ICD_FILENAMES, " +
              std::string(detail::exclude_hint));
      !ok)
    return std::move(ok).error();
  auto d = std::make_unique<device>(std::move((*devices)[ordinal]));
  if (auto ok = d->init(); !ok) return std::move(ok).error();
  return d;
}

}  // namespace roster::vulkan

// Its built-in ops become kernel entries with no entry point of their own: a
// call of one runs the backend's built-in shaders in the program's one
// submission (device::dispatch maps it onto the built-in step).
ROSTER_REGISTER_BACKEND(roster::vulkan::backend);

// This file compiles the backend: say so to the linker (<roster/backend.hpp>).
ROSTER_IMPL_DEFINE_BODIES(vulkan);
