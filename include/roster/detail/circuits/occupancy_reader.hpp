#pragma once
// Occupancy of a GPU read through NVML, without creating a CUDA context:
// memory in use, compute mode, MIG mode and instances, and the processes on
// it. Circuits use it to leave out a GPU nobody may use (compute mode
// prohibited) or that another process holds exclusively, and to rank an idle
// GPU before a busy one. NVML comes from detail/nvml.hpp.

#include <roster/backend.hpp>
#include <roster/occupancy.hpp>
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/open/nvml.hpp>

#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace roster::detail {

/// Reads a GPU's occupancy through NVML by its UUID, else its PCI address;
/// nullopt when NVML is absent or does not know the device.
inline std::optional<device_occupancy> nvml_occupancy(const adapter_info& a) {
  const nvml_api& api = nvml();
  if (!api.ready || a.vendor_id != vendor_nvidia) return std::nullopt;
  void* h = nullptr;
  bool found = false;
  if (a.has_uuid() && api.by_uuid != nullptr) found = api.by_uuid(a.uuid_string().c_str(), &h) == 0;
  if (!found && !a.pci_address.empty() && api.by_pci != nullptr) found = api.by_pci(a.pci_address.c_str(), &h) == 0;
  if (!found) return std::nullopt;
  device_occupancy o;
  o.source = "NVML";
  nvml_api::memory m{};
  if (api.memory_info != nullptr && api.memory_info(h, &m) == 0) {
    o.memory_total = m.total;
    o.memory_free = m.free;
  }
  int mode = 0;
  if (api.compute_mode != nullptr && api.compute_mode(h, &mode) == 0) {
    switch (mode) {
      case 1: o.mode = device_occupancy::compute_mode::exclusive_thread; break;
      case 2: o.mode = device_occupancy::compute_mode::prohibited; break;
      case 3: o.mode = device_occupancy::compute_mode::exclusive_process; break;
      default: o.mode = device_occupancy::compute_mode::shared; break;
    }
  }
  unsigned current = 0, pending = 0;
  if (api.mig_mode != nullptr && api.mig_mode(h, &current, &pending) == 0) o.mig_enabled = current == 1;
  if (o.mig_enabled && api.max_mig != nullptr && api.mig_by_index != nullptr && api.uuid != nullptr) {
    unsigned max = 0;
    if (api.max_mig(h, &max) == 0)
      for (unsigned i = 0; i < max && i < 64; ++i) {
        void* mh = nullptr;
        char u[96] = {};
        if (api.mig_by_index(h, i, &mh) == 0 && api.uuid(mh, u, sizeof u) == 0) o.mig_uuids.emplace_back(u);
      }
  }
  if (api.processes != nullptr) {
    nvml_api::process_v3 infos[64];
    unsigned count = 64;
    if (api.processes(h, &count, infos) == 0)
      for (unsigned i = 0; i < count && i < 64; ++i) o.pids.push_back(infos[i].pid);
  }
  return o;
}

/// The source of occupancy for circuits: NVML, or what a test records.
using occupancy_source = std::optional<device_occupancy> (*)(const adapter_info&);

struct occupancy_state {
  std::mutex mutex;
  occupancy_source source = nullptr;  // null: NVML
};

inline occupancy_state& the_occupancy_state() {
  static occupancy_state s;
  return s;
}

/// Replaces NVML with recorded answers (tests); null restores NVML.
inline void set_occupancy_source_for_testing(occupancy_source source) {
  auto& s = the_occupancy_state();
  std::lock_guard lock(s.mutex);
  s.source = source;
}

/// Reads the occupancy of an adapter through the current source.
inline std::optional<device_occupancy> read_occupancy(const adapter_info& a) {
  occupancy_source source = nullptr;
  {
    auto& s = the_occupancy_state();
    std::lock_guard lock(s.mutex);
    source = s.source;
  }
  if (source) return source(a);
  return nvml_occupancy(a);
}

/// Says why no process of ours may use the device, or returns empty when it may.
inline std::string occupancy_refusal(const device_occupancy& o) {
  if (o.mode == device_occupancy::compute_mode::prohibited)
    return "compute mode prohibited (nvidia-smi -c): no process may use it";
  if (o.mode == device_occupancy::compute_mode::exclusive_process ||
      o.mode == device_occupancy::compute_mode::exclusive_thread) {
    const auto self = static_cast<unsigned>(::getpid());
    for (unsigned pid : o.pids)
      if (pid != self)
        return "compute mode exclusive-process and held by process " + std::to_string(pid);
  }
  return {};
}

/// Returns the processes on the device other than this one.
inline std::size_t other_processes(const device_occupancy& o) {
  const auto self = static_cast<unsigned>(::getpid());
  std::size_t n = 0;
  for (unsigned pid : o.pids) n += pid != self ? 1 : 0;
  return n;
}

}  // namespace roster::detail
