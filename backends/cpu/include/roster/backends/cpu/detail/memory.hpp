#pragma once
// Private: how much memory a CPU allocation may take (memory-inl.hpp).

#include <roster/config.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace roster::cpu::detail {

/// Memory this process may still allocate, and where the figure comes from.
struct memory_limit {
  std::uint64_t bytes = 0;
  std::string source;  ///< e.g. "MemAvailable in /proc/meminfo"
};

/// Allocations of at least this many bytes are checked against
/// available_memory() before they are made; reading the figures costs more
/// than a smaller allocation does.
inline constexpr std::size_t checked_allocation_bytes = std::size_t{1} << 20;

/// Returns the memory available to this process: MemAvailable in
/// <proc_root>/meminfo, lowered by every cgroup memory limit on the way from
/// this process's cgroup (<proc_root>/self/cgroup) to the root, less what the
/// cgroup uses beyond the page cache the kernel can drop (file cache but not
/// shared memory; v2: memory.max, memory.current and memory.stat under
/// <sys_root>/fs/cgroup; v1: memory.limit_in_bytes, memory.usage_in_bytes and
/// memory.stat under <sys_root>/fs/cgroup/memory). nullopt when no figure can
/// be read.
[[nodiscard]] ROSTER_INLINE std::optional<memory_limit> available_memory(std::string_view proc_root,
                                                                         std::string_view sys_root);

/// Returns available_memory() of this machine: /proc, and /sys or
/// ROSTER_SYSFS_ROOT (as the core reads sysfs).
[[nodiscard]] ROSTER_INLINE std::optional<memory_limit> host_available_memory();

/// Returns "1.5 GiB", "12.0 MiB" or "512 bytes".
[[nodiscard]] ROSTER_INLINE std::string memory_text(std::uint64_t bytes);

}  // namespace roster::cpu::detail
