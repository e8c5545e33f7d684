#pragma once
// Private: whether a plugin just opened registers where this process looks.

#include <roster/detail/inventory/inventory_hub_state.hpp>
#include <roster/error.hpp>

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <string>

namespace roster::detail {

/// Returns an error when the plugin behind `handle` runs on another copy of
/// roster's process-wide state (the registry hub, device ids, caches) than
/// this program: a plugin built header-only carries one, and binds to the
/// program's only when the program exports it (-rdynamic). Two copies of that
/// state disagree about devices and plugins, so such a plugin is refused.
inline std::optional<error> plugin_hub_unseen(void* handle, const std::string& path) {
  // The hub is the static inside roster::detail::the_hub() (the function
  // itself is often inlined away). dlsym on the handle finds the plugin's own
  // definition first, whichever copy its code was bound to.
  void* sym = dlsym(handle, "_ZZN6roster6detail7the_hubEvE1h");
  if (sym == nullptr) return std::nullopt;  // the plugin uses libroster's hub, or none
  hub& h = *static_cast<hub*>(sym);
  if (&h == &the_hub()) return std::nullopt;
  {
    std::lock_guard lock(h.mutex);
    // Its module hook reports to the hub its code is bound to: an untouched
    // copy means the plugin's code joined ours.
    if (h.generation == 0 && h.slots == nullptr) return std::nullopt;
  }
  return error(errc::unavailable,
               "plugin '" + path +
                   "' runs on its own copy of roster's process-wide state (registry, device ids, caches), "
                   "apart from this program's: the plugin was built header-only (or against libroster while the "
                   "program is header-only) and the program does not export roster's symbols",
               "link the program with -rdynamic (Meson: export_dynamic: true; CMake: ENABLE_EXPORTS ON), or "
               "build the program and the plugin against libroster (pkg-config --libs roster) instead of "
               "header-only");
}

}  // namespace roster::detail
