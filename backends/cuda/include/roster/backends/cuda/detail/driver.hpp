#pragma once
// Private: what this machine offers CUDA (an NVIDIA GPU on the PCI bus, the
// kernel driver, the driver's library libcuda.so.1 and its CUDA version),
// and the error that tells a user which of them is missing, as nvidia-smi
// tells "no devices" from "driver/library version mismatch".

#include <roster/backend.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace roster::cuda::detail {

/// The machine's answers, gathered once the driver could not list a device.
struct driver_probe {
  int error = 0;                ///< the failed call's CUresult (cuInit, cuDeviceGetCount); 0: the driver is too old
  int driver_version = 0;       ///< cuDriverGetVersion (1000 x major + 10 x minor); 0: no driver answered
  int kernels_version = 0;      ///< the CUDA version whose toolkit built the kernels' image (its major release is needed)
  bool library = false;         ///< libcuda.so.1 loads
  bool kernel_module = false;   ///< /proc/driver/nvidia/version exists
  bool nvidia_gpu = false;      ///< the PCI bus (sysfs) has an NVIDIA display controller
  std::string visible_devices;  ///< CUDA_VISIBLE_DEVICES; empty when unset
};

/// Returns this machine's probe after the driver failed with `error` (0: it is too old).
ROSTER_INLINE driver_probe probe_driver(int error);

/// Returns the error that says why no CUDA device can be used, each with its
/// own fix: no NVIDIA GPU and no driver (the backend is absent: one short
/// line); a GPU or kernel driver without the library libcuda.so.1 (no
/// driver); a library that does not answer; a driver older than the kernels
/// (both CUDA versions); no device visible (CUDA_VISIBLE_DEVICES); else the
/// driver's own code with the usual fix. Each starts "cuda: " once.
ROSTER_INLINE roster::error explain(const driver_probe& p);

/// Returns whether the probe means no NVIDIA hardware and no driver at all.
ROSTER_INLINE bool absent(const driver_probe& p) noexcept;

/// Returns the number of CUDA devices this process sees (cuInit, then
/// cuDeviceGetCount), or explain()'s error.
ROSTER_INLINE expected<int> device_count();

/// Returns the sysfs root: ROSTER_SYSFS_ROOT when set, else /sys (as the core reads it).
ROSTER_INLINE std::string sysfs_root();

/// Returns the PCI device id of the device at `pci_address` ("0000:01:00.0")
/// from sysfs; 0 when it cannot be read.
ROSTER_INLINE std::uint32_t pci_device_id(std::string_view pci_address);

/// Returns "12.2" for a CUDA version of 12020.
ROSTER_INLINE std::string cuda_version_text(int version);

}  // namespace roster::cuda::detail
