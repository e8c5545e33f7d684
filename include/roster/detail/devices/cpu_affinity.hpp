#pragma once
// CPU locality of a GPU and pinning a rank to it. sysfs gives each PCI
// function's local_cpulist and numa_node (the H200 node reports numa_node -1
// and all 32 CPUs local to both GPUs, so local_cpulist is what to read).
// ROSTER_SYSFS_ROOT replaces /sys (see sysfs_root()).

#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/base/text.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::detail {

// CPU ids roster handles: those a cpu_set_t holds.
inline constexpr int max_cpu = CPU_SETSIZE;

/// Parses a Linux CPU list ("0-3,8,10-11"); nullopt when malformed or past max_cpu.
inline std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  std::vector<int> out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty()) return out;
  auto number = [](std::string_view t) -> std::optional<int> {
    auto v = parse_uint(t, max_cpu - 1);
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  while (true) {
    const auto comma = s.find(',');
    const std::string_view part = s.substr(0, comma);
    const auto dash = part.find('-');
    auto lo = number(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : number(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) out.push_back(c);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Writes CPU ids as a compact list ("0-3,8").
inline std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

/// The CPUs local to one PCI device, as sysfs says.
struct cpu_locality {
  std::vector<int> cpus;  ///< empty when unknown
  int numa_node = -1;     ///< -1 when unknown (or when the firmware does not say, as on the H200 node)
};

/// Reads local_cpulist and numa_node of a PCI address under the sysfs root.
inline cpu_locality read_cpu_locality(const std::string& pci_address, const std::string& root = sysfs_root()) {
  cpu_locality out;
  if (pci_address.empty()) return out;
  const std::string dev = root + "/bus/pci/devices/" + pci_address;
  if (auto cpus = parse_cpu_list(read_small_file(dev + "/local_cpulist"))) out.cpus = std::move(*cpus);
  const std::string numa = read_small_file(dev + "/numa_node");
  if (auto n = parse_uint(numa, 65535)) out.numa_node = static_cast<int>(*n);
  return out;
}

/// Returns the node's online CPUs (sysfs devices/system/cpu/online under the
/// sysfs root, else 0 to sysconf's count - 1).
inline std::vector<int> online_cpus(const std::string& root = sysfs_root()) {
  if (auto cpus = parse_cpu_list(read_small_file(root + "/devices/system/cpu/online")); cpus && !cpus->empty())
    return std::move(*cpus);
  std::vector<int> out;
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < n && c < max_cpu; ++c) out.push_back(static_cast<int>(c));
  return out;
}

/// Returns the CPUs this process may run on now (the launcher's binding).
inline std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < max_cpu; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

/// The CPUs a rank should run on: those local to its GPU that the launcher
/// allows, split evenly among the `sharing` ranks of that GPU (this one is
/// number `slot`). Never more than the launcher allows; when the GPU's CPUs
/// are unknown or none is allowed, the launcher's set, with the reason.
struct cpu_choice {
  std::vector<int> cpus;
  std::string reason;
};

inline cpu_choice choose_cpus(const cpu_locality& local, const std::vector<int>& allowed, std::size_t slot,
                              std::size_t sharing) {
  cpu_choice out;
  if (local.cpus.empty()) {
    out.cpus = allowed;
    out.reason = "the device's local CPUs are unknown (no local_cpulist): kept the launcher's CPUs";
    return out;
  }
  std::vector<int> both;
  std::set_intersection(local.cpus.begin(), local.cpus.end(), allowed.begin(), allowed.end(),
                        std::back_inserter(both));
  if (both.empty()) {
    out.cpus = allowed;
    out.reason = "none of the device's local CPUs (" + format_cpu_list(local.cpus) +
                 ") is allowed by the launcher's binding: kept the launcher's CPUs";
    return out;
  }
  if (sharing > 1 && both.size() >= sharing) {
    const std::size_t per = both.size() / sharing;
    const std::size_t first = (slot % sharing) * per;
    out.cpus.assign(both.begin() + static_cast<std::ptrdiff_t>(first),
                    both.begin() + static_cast<std::ptrdiff_t>(first + per));
    out.reason = "CPUs local to the device (" + format_cpu_list(local.cpus) + "), share " + std::to_string(slot % sharing + 1) +
                 " of " + std::to_string(sharing) + " ranks on it";
    return out;
  }
  out.cpus = std::move(both);
  out.reason = "CPUs local to the device (" + format_cpu_list(local.cpus) + ") that the launcher allows";
  return out;
}

/// Pins the calling process to the CPUs; false with errno kept on failure.
inline bool pin_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace roster::detail
