#pragma once
// Private: the plugin files and folders roster refused, with the reason.
// The list itself is defined with the rest of the plugin code
// (detail/backend/plugins-inl.hpp), once per process.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace roster::detail {

// At most this many refusals are kept (a folder of a million strangers must
// not grow the list without end); past it they are only counted.
inline constexpr std::size_t refused_plugin_cap = 1024;

// Every plugin file or folder roster did not open, with the reason.
struct plugin_refusals {
  std::mutex mutex;
  std::vector<error> list;   // the first refused_plugin_cap refusals
  std::size_t dropped = 0;   // the refusals past them, counted only
};
// The process's list (default visibility, so the executable and libroster agree).
ROSTER_API ROSTER_INLINE plugin_refusals& refused_plugin_list() noexcept;

// Records a refusal and hands it back, for `return refused(...)`.
inline error refused(error e) {
  try {
    auto& r = refused_plugin_list();
    std::lock_guard lock(r.mutex);
    if (r.list.size() < refused_plugin_cap) r.list.push_back(e);
    else ++r.dropped;
  } catch (...) {  // out of memory: the error still reaches the caller
  }
  return e;
}

// The entry that stands for the refusals past the cap.
inline error refusals_dropped(std::size_t dropped) {
  return error(errc::invalid_argument,
               "and " + std::to_string(dropped) + " more plugin file" + (dropped == 1 ? "" : "s") +
                   " (or folders) were refused; only the first " + std::to_string(refused_plugin_cap) +
                   " refusals are kept",
               "clear the plugin folders of files that are not roster plugins of this roster, then run again to "
               "see the rest");
}

}  // namespace roster::detail
