// The CUDA adapters: one per device the runtime shows (after
// CUDA_VISIBLE_DEVICES), with the identity circuits merge by.

#include "adapters.hpp"
#include "driver.hpp"
#include "errors.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace roster::cuda {
namespace detail {
namespace {

// Returns the driver's own version ("580.159.04") from /proc, or "".
std::string kernel_driver_version() {
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

}  // namespace

expected<adapter_info> describe_adapter(int ordinal) {
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, ordinal); e != cudaSuccess)
    return cuda_failure(e, "cuda:" + std::to_string(ordinal), "cudaGetDeviceProperties");
  adapter_info a;
  a.backend = "cuda";
  a.ordinal = static_cast<std::uint32_t>(ordinal);
  a.name = prop.name;
  a.type = prop.integrated ? device_type::integrated_gpu : device_type::discrete_gpu;
  std::memcpy(a.uuid.data(), prop.uuid.bytes, 16);
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
  a.pci_address = pci;
  a.vendor_id = 0x10de;
  // The runtime applied CUDA_VISIBLE_DEVICES before listing this device: its
  // adapters are the mask's visible set for every other backend's (circuits).
  a.applied_mask = "CUDA_VISIBLE_DEVICES";
  // The runtime does not give the PCI device id; sysfs does, where it is mounted.
  a.device_id = pci_device_id(a.pci_address);
  a.memory_bytes = prop.totalGlobalMem;
  a.compute_units = static_cast<std::uint32_t>(prop.multiProcessorCount);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  const std::string cuda_version = "CUDA " + cuda_version_text(driver);
  const std::string kernel = kernel_driver_version();
  a.driver_version = kernel.empty() ? cuda_version : kernel + " (" + cuda_version + ")";
  a.native_grid_sync = prop.cooperativeLaunch != 0;
  a.f64 = true;
  a.ops = op_set::all();
  return a;
}

}  // namespace detail

}  // namespace roster::cuda
