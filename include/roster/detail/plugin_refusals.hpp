#pragma once
// Private: the plugin files and folders roster refused, with the reason.
// The list itself is defined with the rest of the plugin code
// (detail/plugins-inl.hpp), once per process.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <mutex>
#include <vector>

namespace roster::detail {

// Every plugin file or folder roster did not open, with the reason.
struct plugin_refusals {
  std::mutex mutex;
  std::vector<error> list;
};
// The process's list (default visibility, so the executable and libroster agree).
ROSTER_API ROSTER_INLINE plugin_refusals& refused_plugin_list() noexcept;

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
