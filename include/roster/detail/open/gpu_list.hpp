#pragma once
// The machine's GPUs as the machine lists them, with no vendor runtime and no
// mask: NVML (detail/open/nvml.hpp: loaded with dlopen, nothing links it) gives UUIDs and PCI
// addresses; sysfs gives PCI addresses, vendor and device ids. Vendor masks
// are resolved against this list when the vendor's own runtime is not linked.

#include <roster/sysfs.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/file_io.hpp>
#include <roster/detail/open/nvml.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace roster::detail {

/// Returns the sysfs root: ROSTER_SYSFS_ROOT, else "/sys". Tests and
/// containers point it at a tree of their own, as HWLOC_FSROOT does for hwloc.
inline std::string sysfs_root() {
  auto v = env_nonblank(env_sysfs_root);
  return v ? std::string(*v) : std::string("/sys");
}

// Reads at most 63 bytes of a small sysfs file; empty when it is missing, not
// a regular file, or unreadable. O_NONBLOCK: a FIFO in a synthetic tree must
// not hang the scan.
inline std::string read_small_file(const std::string& path) {
  std::string kind;
  const int fd = open_regular(path, O_RDONLY, kind);
  if (fd < 0) return {};
  std::string out;
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  if (n > 0) out.assign(buf, static_cast<std::size_t>(n));
  ::close(fd);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

/// Lists the display controllers (PCI class 0x03) under a sysfs PCI device
/// folder, by default /sys/bus/pci/devices; source "sysfs" when the folder was
/// readable, empty otherwise.
inline physical_gpus gpus_from_sysfs(const std::string& root = "/sys/bus/pci/devices") {
  physical_gpus out;
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return out;
  out.source = "sysfs";
  std::size_t seen = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    if (++seen > 4096) break;  // a bounded scan of a strange tree
    const std::string dev = root + "/" + e->d_name;
    const std::uint32_t cls = parse_hex_id(read_small_file(dev + "/class"));
    if ((cls >> 16) != 0x03) continue;
    physical_gpu g;
    g.vendor_id = parse_hex_id(read_small_file(dev + "/vendor"));
    g.device_id = parse_hex_id(read_small_file(dev + "/device"));
    g.pci_address = lower(e->d_name);
    out.gpus.push_back(std::move(g));
  }
  ::closedir(dir);
  return out;
}

/// Lists NVIDIA GPUs through NVML, with UUIDs and PCI addresses, creating no
/// CUDA context; source "NVML", or empty when NVML is absent or fails.
inline physical_gpus gpus_from_nvml() {
  physical_gpus out;
  const nvml_api& api = nvml();
  unsigned n = 0;
  if (!api.ready || !api.count || !api.by_index || !api.uuid || !api.pci || api.count(&n) != 0) return out;
  out.source = "NVML";
  for (unsigned i = 0; i < n && i < 256; ++i) {
    void* h = nullptr;
    if (api.by_index(i, &h) != 0) continue;
    physical_gpu g;
    char u[96] = {};
    if (api.uuid(h, u, sizeof u) == 0) g.uuid = lower(u);
    nvml_api::pci_info p{};
    if (api.pci(h, &p) == 0) {
      char addr[32];
      std::snprintf(addr, sizeof addr, "%04x:%02x:%02x.0", p.domain & 0xffffu, p.bus & 0xffu, p.device & 0xffu);
      g.pci_address = addr;
      g.vendor_id = p.pci_device_id & 0xffffu;
      g.device_id = p.pci_device_id >> 16;
    }
    if (g.vendor_id == 0) g.vendor_id = vendor_nvidia;
    out.gpus.push_back(std::move(g));
  }
  return out;
}

/// Returns the machine's GPU list: NVML's NVIDIA GPUs plus sysfs for the other
/// vendors, else sysfs alone.
inline physical_gpus machine_gpus() {
  physical_gpus sys = gpus_from_sysfs(sysfs_root() + "/bus/pci/devices");
  physical_gpus nv = gpus_from_nvml();
  if (nv.source.empty()) return sys;
  for (auto& g : sys.gpus)
    if (g.vendor_id != vendor_nvidia) nv.gpus.push_back(std::move(g));
  nv.source = sys.source.empty() ? "NVML" : "NVML and sysfs";
  return nv;
}

}  // namespace roster::detail
