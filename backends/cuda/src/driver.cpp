// What this machine offers CUDA, and the error that says what is missing
// (driver.hpp).

#include "driver.hpp"
#include "errors.hpp"

#include <roster/env.hpp>
#include <roster/sysfs.hpp>

#include <cuda_runtime_api.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace roster::cuda::detail {
namespace {

// Reads at most 63 bytes of a small sysfs file, trailing newline dropped;
// empty when it is missing, unreadable or not a regular file (O_NONBLOCK: a
// FIFO in a synthetic tree must not hang the probe).
std::string read_small_file(const std::string& path) {
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
bool nvidia_gpu_on_bus() {
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

// Whether the driver's library loads (it is looked up as the runtime does).
bool driver_library_loads() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return false;
  ::dlclose(lib);
  return true;
}

std::string exclude() { return std::string(exclude_fix); }

}  // namespace

std::string sysfs_root() {
  const auto v = env::text("ROSTER_SYSFS_ROOT");
  if (v && v->find_first_not_of(" \t") != std::string_view::npos) return std::string(*v);
  return "/sys";
}

std::uint32_t pci_device_id(std::string_view pci_address) {
  return parse_hex_id(read_small_file(sysfs_root() + "/bus/pci/devices/" + std::string(pci_address) + "/device"));
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

driver_probe probe_driver(int error) {
  driver_probe p;
  p.error = error;
  if (cudaDriverGetVersion(&p.driver_version) != cudaSuccess) p.driver_version = 0;
  if (cudaRuntimeGetVersion(&p.runtime_version) != cudaSuccess) p.runtime_version = CUDART_VERSION;
  (void)cudaGetLastError();
  p.library = p.driver_version != 0 || driver_library_loads();
  p.kernel_module = ::access("/proc/driver/nvidia/version", F_OK) == 0;
  p.nvidia_gpu = nvidia_gpu_on_bus();
  if (const auto mask = env::text("CUDA_VISIBLE_DEVICES")) p.visible_devices = std::string(*mask);
  return p;
}

bool absent(const driver_probe& p) noexcept {
  return p.driver_version == 0 && !p.library && !p.kernel_module && !p.nvidia_gpu;
}

roster::error explain(const driver_probe& p) {
  const auto e = static_cast<cudaError_t>(p.error);
  const std::string runtime = cuda_version_text(p.runtime_version);
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
  if (p.driver_version < p.runtime_version &&
      (e == cudaErrorInsufficientDriver || e == cudaErrorCallRequiresNewerDriver))
    return make_cuda_error(p.error,
                           "cuda: the NVIDIA driver supports CUDA " + cuda_version_text(p.driver_version) +
                               ", older than the CUDA " + runtime + " runtime roster was built with",
                           "update the NVIDIA driver to one for CUDA " + runtime +
                               " or newer (nvidia-smi's header shows the CUDA version a driver supports), or build "
                               "roster with a CUDA toolkit no newer than " + cuda_version_text(p.driver_version) +
                               ", " + exclude());
  if (e == cudaErrorNoDevice) {
    if (!p.visible_devices.empty())
      return make_cuda_error(p.error, "cuda: no CUDA device is visible (CUDA_VISIBLE_DEVICES='" + p.visible_devices + "')",
                             "set CUDA_VISIBLE_DEVICES to the devices the job was given, or unset it; nvidia-smi "
                             "lists them, " + exclude());
    return make_cuda_error(p.error, "cuda: the NVIDIA driver sees no CUDA device", fix_for(e));
  }
  return make_cuda_error(p.error, "cuda: cudaGetDeviceCount", fix_for(e));
}

expected<int> device_count() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: the runtime keeps the last error per thread
    return explain(probe_driver(static_cast<int>(e)));
  }
  return count;
}

}  // namespace roster::cuda::detail
