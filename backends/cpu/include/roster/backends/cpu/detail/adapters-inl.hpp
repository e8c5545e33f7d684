#pragma once
// Private: the CPU adapter, the host as roster sees it: its name, vendor,
// memory, UUID and the thread count (ROSTER_CPU_THREADS or the affinity mask).

#include <roster/backends/cpu.hpp>
#include <roster/env.hpp>

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace roster::cpu {

namespace detail {

inline std::string cpu_read_field(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto b = line.find_first_not_of(" \t", colon + 1);
    return b == std::string::npos ? std::string() : line.substr(b);
  }
  return {};
}

inline std::uint64_t cpu_fnv1a(std::string_view text, std::uint64_t h) noexcept {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The adapter's UUID: a hash of /etc/machine-id (the raw id is never exposed,
// as systemd asks), formatted as an RFC 9562 version-8 UUID. All zero when
// the machine has no readable machine-id.
inline std::array<std::uint8_t, 16> cpu_uuid() {
  std::array<std::uint8_t, 16> u{};
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (!(in >> id) || id.empty()) return u;
  const std::uint64_t h1 = cpu_fnv1a("roster-cpu-uuid:" + id, 14695981039346656037ull);
  const std::uint64_t h2 = cpu_fnv1a(id + ":roster-cpu-uuid", h1 ^ 0x9e3779b97f4a7c15ull);
  for (int i = 0; i < 8; ++i) {
    u[i] = static_cast<std::uint8_t>(h1 >> (8 * i));
    u[8 + i] = static_cast<std::uint8_t>(h2 >> (8 * i));
  }
  u[6] = static_cast<std::uint8_t>((u[6] & 0x0f) | 0x80);  // version 8
  u[8] = static_cast<std::uint8_t>((u[8] & 0x3f) | 0x80);  // RFC variant
  return u;
}

}  // namespace detail

ROSTER_INLINE expected<unsigned> thread_count() {
  auto set = env::whole_number("ROSTER_CPU_THREADS", 1, max_threads);
  if (!set) return std::move(set).error().prepend("cpu");
  if (*set) return static_cast<unsigned>(**set);
  // The CPUs this process may run on (an MPI rank bound to 4 cores gets 4),
  // else every online one.
  unsigned hw = 0;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) hw = static_cast<unsigned>(CPU_COUNT(&mask));
  if (hw == 0) hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1u : std::min(hw, max_threads);
}

ROSTER_INLINE adapter_info host_adapter(unsigned threads) {
  adapter_info a;
  a.backend = std::string(backend::id);
  a.ordinal = 0;
  a.type = device_type::cpu;
  a.name = detail::cpu_read_field("/proc/cpuinfo", "model name");
  if (a.name.empty()) a.name = "CPU";
  const std::string vendor = detail::cpu_read_field("/proc/cpuinfo", "vendor_id");
  a.vendor_id = vendor == "GenuineIntel" ? 0x8086u : vendor == "AuthenticAMD" ? 0x1022u : 0u;
  const std::string total = detail::cpu_read_field("/proc/meminfo", "MemTotal");  // "24532000 kB"
  a.memory_bytes = std::strtoull(total.c_str(), nullptr, 10) * 1024u;
  if (a.memory_bytes == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) a.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  utsname un{};
  if (uname(&un) == 0) a.driver_version = std::string(un.sysname) + " " + un.release;
  a.uuid = detail::cpu_uuid();
  a.compute_units = threads;
  a.native_grid_sync = true;
  a.f64 = true;
  a.ops = op_set::all();
  return a;
}

}  // namespace roster::cpu
