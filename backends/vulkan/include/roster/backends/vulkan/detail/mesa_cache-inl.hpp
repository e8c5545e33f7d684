#pragma once
// Mesa's shader cache on a full disk: Mesa's Vulkan drivers (lavapipe, RADV,
// ANV) write compiled shaders from a thread of their own through a mapped
// index file, and when the disk under it is full that write raises SIGBUS and
// the whole program dies (Mesa 22.3's lavapipe, a full XDG_CACHE_HOME).
// Before the first instance, where the cache's disk has less than
// mesa_cache_min_free bytes free, roster turns the cache off for this process
// (MESA_SHADER_CACHE_DISABLE=true) and says so on stderr, with a Fix.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/instance.hpp>

#include <roster/env.hpp>

#include <sys/statvfs.h>

#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace roster::vulkan::detail {

// The folder Mesa puts its cache in (util/disk_cache_os.c): MESA_SHADER_CACHE_DIR,
// else $XDG_CACHE_HOME/mesa_shader_cache, else $HOME/.cache/mesa_shader_cache.
ROSTER_INLINE std::string mesa_cache_folder() {
  if (auto d = env::text("MESA_SHADER_CACHE_DIR"); d && !d->empty()) return std::string(*d);
  if (auto x = env::text("XDG_CACHE_HOME"); x && !x->empty()) return std::string(*x) + "/mesa_shader_cache";
  if (auto h = env::text("HOME"); h && !h->empty()) return std::string(*h) + "/.cache/mesa_shader_cache";
  return {};
}

// Free bytes on the file system of `path`, or of its nearest folder that exists.
ROSTER_INLINE std::optional<std::uint64_t> free_bytes(std::string path) {
  for (;;) {
    struct statvfs s{};
    if (::statvfs(path.c_str(), &s) == 0) return std::uint64_t{s.f_bavail} * s.f_frsize;
    const auto slash = path.find_last_of('/');
    if (path == "/" || slash == std::string::npos) return std::nullopt;
    path.resize(slash == 0 ? 1 : slash);
  }
}


ROSTER_INLINE void guard_mesa_shader_cache() noexcept {
  try {
    auto off = env::flag("MESA_SHADER_CACHE_DISABLE");
    if (!off || (*off && **off)) return;  // turned off already, or a value Mesa reads its own way
    const std::string folder = mesa_cache_folder();
    if (folder.empty()) return;
    const auto room = free_bytes(folder);
    if (!room || *room >= mesa_cache_min_free) return;
    // Before any driver is loaded. setenv while another thread reads the
    // environment is a race; roster's only other thread here (NVML's start)
    // reads none of Mesa's variables, and a crash is the alternative.
    if (::setenv("MESA_SHADER_CACHE_DISABLE", "true", 0) != 0) return;
    std::fprintf(stderr,
                 "roster: vulkan: %llu KiB free on the disk of Mesa's shader cache (%s): Mesa's drivers crash "
                 "(SIGBUS) when that disk fills, so its cache is off for this process "
                 "(MESA_SHADER_CACHE_DISABLE=true)\nFix: free space there, point MESA_SHADER_CACHE_DIR at a disk "
                 "with room, or set MESA_SHADER_CACHE_DISABLE=true yourself to keep this quiet\n",
                 static_cast<unsigned long long>(*room / 1024), folder.c_str());
  } catch (...) {
    // Out of memory building a path: leave Mesa as it is.
  }
}

}  // namespace roster::vulkan::detail
