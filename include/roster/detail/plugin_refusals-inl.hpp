#pragma once
// Private: the plugin files and folders roster refused, with the reason.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/plugins.hpp>

#include <mutex>
#include <vector>

namespace roster::detail {

// Every plugin file or folder roster did not open, with the reason.
struct plugin_refusals {
  std::mutex mutex;
  std::vector<error> list;
};
ROSTER_API ROSTER_INLINE plugin_refusals& refused_plugin_list() noexcept {
  static constinit plugin_refusals r;
  return r;
}
// Records a refusal and hands it back, for `return refused(...)`.
inline error refused(error e) {
  try {
    auto& r = refused_plugin_list();
    std::lock_guard lock(r.mutex);
    if (r.list.size() < 1024) r.list.push_back(e);
  } catch (...) {  // out of memory: the error still reaches the caller
  }
  return e;
}

}  // namespace roster::detail

namespace roster {

ROSTER_INLINE std::vector<error> refused_plugins() {
  auto& r = detail::refused_plugin_list();
  std::lock_guard lock(r.mutex);
  return r.list;
}

}  // namespace roster
