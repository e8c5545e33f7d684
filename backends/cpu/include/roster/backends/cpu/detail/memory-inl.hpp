#pragma once
// Private: available memory from /proc/meminfo and the cgroup limits, for
// the CPU device's allocation check (memory.hpp).

#include <roster/backends/cpu/detail/memory.hpp>
#include <roster/env.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace roster::cpu::detail {

// Reads a small text file of /proc or a cgroup tree; empty when it is
// missing, unreadable or not a regular file (O_NONBLOCK: a FIFO put in a
// test's tree must not hang the allocation).
inline std::string cpu_read_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];
    for (ssize_t n; out.size() < (std::size_t{1} << 16) && (n = ::read(fd, buf, sizeof buf)) > 0;)
      out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// Parses the leading decimal number of `text` (spaces skipped); nullopt when there is none.
inline std::optional<std::uint64_t> cpu_leading_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') break;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::numeric_limits<std::uint64_t>::max();
    v = v * 10 + d;
  }
  return v;
}

// Returns the number after `key` at the start of a line of `text` ("MemAvailable:", "inactive_file ").
inline std::optional<std::uint64_t> cpu_keyed_number(std::string_view text, std::string_view key) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, key.size()) == key) return cpu_leading_number(line.substr(key.size()));
    at = end + 1;
  }
  return std::nullopt;
}

// The names one cgroup version gives its files and counters.
struct cpu_cgroup_files {
  const char* limit;    // the limit: "max" (v2) or ~2^63 (v1) when there is none
  const char* usage;    // what the cgroup uses, page cache included
  const char* cache;    // memory.stat: the page cache in it
  const char* shmem;    // memory.stat: the part of that cache the kernel cannot drop (tmpfs, shared memory)
  const char* version;  // "v2" or "v1", for the message
};
inline constexpr cpu_cgroup_files cpu_cgroup_v2{"memory.max", "memory.current", "file ", "shmem ", "v2"};
inline constexpr cpu_cgroup_files cpu_cgroup_v1{"memory.limit_in_bytes", "memory.usage_in_bytes", "total_cache ",
                                                "total_shmem ", "v1"};

// What one cgroup level leaves: its limit less what it uses beyond the page
// cache the kernel can drop before it refuses memory.
inline std::optional<std::uint64_t> cpu_cgroup_room(const std::string& dir, const cpu_cgroup_files& f) {
  const auto limit = cpu_leading_number(cpu_read_text(dir + "/" + f.limit));  // "max" reads as none
  if (!limit || *limit >= (std::uint64_t{1} << 62)) return std::nullopt;  // v1 writes "no limit" as ~2^63
  std::uint64_t used = cpu_leading_number(cpu_read_text(dir + "/" + f.usage)).value_or(0);
  const std::string stat = cpu_read_text(dir + "/memory.stat");
  std::uint64_t cache = cpu_keyed_number(stat, f.cache).value_or(0);
  cache -= std::min(cache, cpu_keyed_number(stat, f.shmem).value_or(0));
  used -= std::min(used, cache);
  return *limit > used ? *limit - used : 0;
}

// Lowers `best` to what the cgroup hierarchy under `mount` leaves, walking
// from this process's cgroup `path` up to the root.
inline void cpu_cgroup_limit(const std::string& mount, std::string path, const cpu_cgroup_files& f,
                             std::optional<memory_limit>& best) {
  for (;;) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const std::string dir = path == "/" ? mount : mount + path;
    if (auto room = cpu_cgroup_room(dir, f); room && (!best || *room < best->bytes))
      best = memory_limit{*room, std::string("the cgroup ") + f.version + " memory limit of " + path + " (" +
                                     f.limit + " less its use)"};
    if (path == "/" || path.empty()) return;
    const std::size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
  }
}

ROSTER_INLINE std::optional<memory_limit> available_memory(std::string_view proc_root, std::string_view sys_root) {
  std::optional<memory_limit> best;
  const std::string proc(proc_root), sys(sys_root);
  if (auto kib = cpu_keyed_number(cpu_read_text(proc + "/meminfo"), "MemAvailable:"))
    best = memory_limit{*kib * 1024, "MemAvailable in /proc/meminfo"};
  // /proc/self/cgroup: "0::/path" (v2), "N:memory:/path" or "N:...,memory,...:/path" (v1).
  const std::string groups = cpu_read_text(proc + "/self/cgroup");
  for (std::size_t at = 0; at < groups.size();) {
    const std::size_t end = std::min(groups.find('\n', at), groups.size());
    const std::string_view line = std::string_view(groups).substr(at, end - at);
    at = end + 1;
    const std::size_t c1 = line.find(':'), c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path(line.substr(c2 + 1));
    if (path.empty() || path.front() != '/') continue;
    if (line.substr(0, c1) == "0" && controllers.empty()) {
      cpu_cgroup_limit(sys + "/fs/cgroup", path, cpu_cgroup_v2, best);
    } else {
      bool memory = false;
      for (std::size_t b = 0; b <= controllers.size();) {
        const std::size_t e = std::min(controllers.find(',', b), controllers.size());
        memory = memory || controllers.substr(b, e - b) == "memory";
        b = e + 1;
      }
      if (memory)
        cpu_cgroup_limit(sys + "/fs/cgroup/memory", path, cpu_cgroup_v1, best);
    }
  }
  return best;
}

ROSTER_INLINE std::optional<memory_limit> host_available_memory() {
  const auto root = env::text("ROSTER_SYSFS_ROOT");
  const bool replaced = root && root->find_first_not_of(" \t") != std::string_view::npos;
  return available_memory("/proc", replaced ? *root : std::string_view("/sys"));
}

ROSTER_INLINE std::string memory_text(std::uint64_t bytes) {
  char out[48];
  if (bytes >= (std::uint64_t{1} << 30))
    std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(bytes) / double(std::uint64_t{1} << 30));
  else if (bytes >= (std::uint64_t{1} << 20))
    std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(bytes) / double(std::uint64_t{1} << 20));
  else
    std::snprintf(out, sizeof out, "%llu bytes", static_cast<unsigned long long>(bytes));
  return out;
}

}  // namespace roster::cpu::detail
