#pragma once
// Private: the CUDA adapters: one per device the driver shows (after
// CUDA_VISIBLE_DEVICES), with the identity circuits merge by.

#include <roster/backends/cuda/detail/adapters.hpp>
#include <roster/backends/cuda/detail/driver.hpp>
#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/errors.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace roster::cuda {
namespace detail {
namespace adapter_identity {

// Returns the driver's own version ("580.159.04") from /proc, or "".
inline std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (in) std::getline(in, line);
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
  // (older drivers: "... x86_64 Kernel Module  580.159.04  Thu ..."): the first dotted number.
  std::size_t at = line.find("Module");
  while (at != std::string::npos && at < line.size()) {
    const std::size_t begin = line.find_first_not_of(' ', at);
    if (begin == std::string::npos) break;
    const std::size_t end = std::min(line.find(' ', begin), line.size());
    const std::string word = line.substr(begin, end - begin);
    if (!word.empty() && word.find('.') != std::string::npos &&
        word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
    at = end;
  }
  return {};
}

}  // namespace adapter_identity

ROSTER_INLINE expected<adapter_info> describe_adapter(int ordinal) {
  const driver_api& cu = api();
  const std::string spec = "cuda:" + std::to_string(ordinal);
  cu_device dev = 0;
  if (int e = cu.cuDeviceGet(&dev, ordinal); e != cu_success) return cuda_failure(e, spec, "cuDeviceGet");
  int attr[8] = {};
  const cu_attribute wanted[8] = {cu_attr_multiprocessor_count, cu_attr_integrated, cu_attr_pci_bus_id,
                                  cu_attr_pci_device_id, cu_attr_pci_domain_id, cu_attr_cooperative_launch,
                                  cu_attr_compute_capability_major, cu_attr_compute_capability_minor};
  for (int i = 0; i < 8; ++i)
    if (int e = cu.cuDeviceGetAttribute(&attr[i], wanted[i], dev); e != cu_success)
      return cuda_failure(e, spec, "cuDeviceGetAttribute");
  char name[256] = {};
  if (int e = cu.cuDeviceGetName(name, sizeof name - 1, dev); e != cu_success)
    return cuda_failure(e, spec, "cuDeviceGetName");
  unsigned char uuid[16] = {};
  if (int e = cu.cuDeviceGetUuid(uuid, dev); e != cu_success) return cuda_failure(e, spec, "cuDeviceGetUuid");
  std::size_t memory = 0;
  if (int e = cu.cuDeviceTotalMem(&memory, dev); e != cu_success) return cuda_failure(e, spec, "cuDeviceTotalMem");
  adapter_info a;
  a.backend = "cuda";
  a.ordinal = static_cast<std::uint32_t>(ordinal);
  a.name = name;
  a.type = attr[1] != 0 ? device_type::integrated_gpu : device_type::discrete_gpu;
  std::memcpy(a.uuid.data(), uuid, 16);
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", static_cast<unsigned>(attr[4]), static_cast<unsigned>(attr[2]),
                static_cast<unsigned>(attr[3]));
  a.pci_address = pci;
  a.vendor_id = 0x10de;
  // The driver applied CUDA_VISIBLE_DEVICES before listing this device: its
  // adapters are the mask's visible set for every other backend's (circuits).
  a.applied_mask = "CUDA_VISIBLE_DEVICES";
  // The driver does not give the PCI device id; sysfs does, where it is mounted.
  a.device_id = pci_device_id(a.pci_address);
  a.memory_bytes = memory;
  a.compute_units = static_cast<std::uint32_t>(attr[0]);
  int driver = 0;
  if (cu.cuDriverGetVersion(&driver) != cu_success) driver = 0;
  const std::string cuda_version = "CUDA " + cuda_version_text(driver);
  const std::string kernel = adapter_identity::kernel_driver_version();
  a.driver_version = kernel.empty() ? cuda_version : kernel + " (" + cuda_version + ")";
  a.native_grid_sync = attr[5] != 0;
  a.f64 = true;
  a.ops = op_set::all();
  return a;
}

}  // namespace detail

}  // namespace roster::cuda
