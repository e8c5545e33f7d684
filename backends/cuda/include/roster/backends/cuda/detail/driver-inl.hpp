#pragma once
// Private: what this machine offers CUDA, and the error that says what is
// missing (driver.hpp).

#include <roster/backends/cuda/detail/driver.hpp>
#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/errors.hpp>
#include <roster/backends/cuda/detail/module.hpp>

#include <roster/env.hpp>
#include <roster/sysfs.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace roster::cuda::detail {
namespace driver_probing {

// Reads at most 63 bytes of a small sysfs file, trailing newline dropped;
// empty when it is missing, unreadable or not a regular file (O_NONBLOCK: a
// FIFO in a synthetic tree must not hang the probe).
inline std::string read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  struct stat st {};
  char buf[64];
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    if (const ssize_t n = ::read(fd, buf, sizeof buf - 1); n > 0) out.assign(buf, static_cast<std::size_t>(n));
  ::close(fd);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Whether the PCI bus has an NVIDIA (0x10de) display controller (class 0x03).
inline bool nvidia_gpu_on_bus() {
  const std::string root = sysfs_root() + "/bus/pci/devices";
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string dev = root + "/" + e->d_name;
    if (parse_hex_id(read_small_file(dev + "/vendor")) == 0x10de &&
        (parse_hex_id(read_small_file(dev + "/class")) >> 16) == 0x03) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

inline std::string exclude() { return std::string(exclude_fix); }

}  // namespace driver_probing

using driver_probing::exclude;
using driver_probing::read_small_file;

ROSTER_INLINE std::string sysfs_root() {
  const auto v = env::text("ROSTER_SYSFS_ROOT");
  if (v && v->find_first_not_of(" \t") != std::string_view::npos) return std::string(*v);
  return "/sys";
}

ROSTER_INLINE std::uint32_t pci_device_id(std::string_view pci_address) {
  return parse_hex_id(read_small_file(sysfs_root() + "/bus/pci/devices/" + std::string(pci_address) + "/device"));
}

ROSTER_INLINE std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

ROSTER_INLINE driver_probe probe_driver(int error) {
  driver_probe p;
  p.error = error;
  const driver_api& cu = api();
  if (cu.cuDriverGetVersion == nullptr || cu.cuDriverGetVersion(&p.driver_version) != cu_success) p.driver_version = 0;
  p.kernels_version = kernels_cuda_version();
  p.library = cu.library != nullptr;
  p.kernel_module = ::access("/proc/driver/nvidia/version", F_OK) == 0;
  p.nvidia_gpu = driver_probing::nvidia_gpu_on_bus();
  if (const auto mask = env::text("CUDA_VISIBLE_DEVICES")) p.visible_devices = std::string(*mask);
  return p;
}

ROSTER_INLINE bool absent(const driver_probe& p) noexcept {
  return p.driver_version == 0 && !p.library && !p.kernel_module && !p.nvidia_gpu;
}

ROSTER_INLINE roster::error explain(const driver_probe& p) {
  const int e = p.error;
  const std::string runtime = cuda_version_text(p.kernels_version);
  if (absent(p))
    return roster::error(errc::unavailable, "cuda: no NVIDIA GPU on this machine",
                         "nothing to do where none is expected; on a GPU machine check that the GPU is on the PCI "
                         "bus (lspci -d 10de:) and install the NVIDIA driver; ROSTER_DEVICE_SELECTOR='!cuda:*' "
                         "stops roster from asking");
  if (p.driver_version == 0 && !p.library) {
    const std::string where = p.kernel_module ? "the NVIDIA kernel driver is loaded" : "an NVIDIA GPU is on the PCI bus";
    return roster::error(errc::unavailable,
                         "cuda: no NVIDIA driver on this machine: " + where +
                             " but the driver's library libcuda.so.1 is not installed",
                         "install the NVIDIA driver for CUDA " + runtime +
                             " or newer (nvidia-smi then lists the GPU); in a container, start it with the GPU "
                             "passed through (docker run --gpus all, the NVIDIA container toolkit) so that "
                             "libcuda.so.1 is there, " + exclude());
  }
  if (p.driver_version == 0)
    return make_cuda_error(p.error, "cuda: the NVIDIA driver's library libcuda.so.1 loads but does not answer",
                           "check the driver with nvidia-smi; reinstall the NVIDIA driver so that its library and "
                           "kernel module come from one release, " + exclude());
  // The image's SASS and PTX come from one toolkit: a driver of an older
  // major release loads neither (the runtime called this cudaErrorInsufficientDriver).
  if (p.driver_version / 1000 < p.kernels_version / 1000 &&
      (e == 0 || e == cu_call_requires_newer_driver || e == cu_unsupported_ptx_version || e == cu_no_binary_for_gpu))
    return roster::error(errc::unavailable,
                         "cuda: the NVIDIA driver supports CUDA " + cuda_version_text(p.driver_version) +
                             ", older than the CUDA " + runtime + " toolkit that built roster's kernels",
                         "update the NVIDIA driver to one for CUDA " + runtime +
                             " or newer (nvidia-smi's header shows the CUDA version a driver supports), or "
                             "regenerate the kernels' image with a CUDA toolkit no newer than " +
                             cuda_version_text(p.driver_version) + " (scripts/regen-cuda-fatbin), " + exclude());
  if (e == cu_no_device) {
    if (!p.visible_devices.empty())
      return make_cuda_error(p.error, "cuda: no CUDA device is visible (CUDA_VISIBLE_DEVICES='" + p.visible_devices + "')",
                             "set CUDA_VISIBLE_DEVICES to the devices the job was given, or unset it; nvidia-smi "
                             "lists them, " + exclude());
    return make_cuda_error(p.error, "cuda: the NVIDIA driver sees no CUDA device", fix_for(e));
  }
  return make_cuda_error(p.error, "cuda: cuInit", fix_for(e));
}

ROSTER_INLINE expected<int> device_count() {
  const driver_api& cu = api();
  if (cu.library == nullptr || cu.cuInit == nullptr || cu.cuDriverGetVersion == nullptr)
    return explain(probe_driver(cu_not_initialized));
  if (const cu_result e = cu.cuInit(0); e != cu_success) return explain(probe_driver(e));
  int version = 0;
  if (cu.cuDriverGetVersion(&version) != cu_success || version / 1000 < kernels_cuda_version() / 1000)
    return explain(probe_driver(0));
  if (cu.missing != nullptr)
    return make_error(errc::unavailable,
                      std::string("cuda: the NVIDIA driver's library libcuda.so.1 has no ") + cu.missing,
                      "update the NVIDIA driver to one for CUDA " + cuda_version_text(kernels_cuda_version()) +
                          " or newer, " + exclude());
  int count = 0;
  if (const cu_result e = cu.cuDeviceGetCount(&count); e != cu_success) return explain(probe_driver(e));
  if (count == 0) return explain(probe_driver(cu_no_device));
  return count;
}

}  // namespace roster::cuda::detail
