#pragma once
/// Backend plugins: shared objects opened with dlopen whose backends join the
/// inventory while they are loaded. ROSTER_PLUGIN_PATH names their folders.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// One plugin that roster opened.
struct plugin {
  std::string path;         ///< absolute path of the file
  void* handle = nullptr;   ///< dlopen's handle
};

/// Opens one backend plugin file with dlopen (RTLD_NOW | RTLD_LOCAL); its
/// backends appear in registered_backends(). Opening a loaded plugin again
/// returns the plugin already loaded.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<plugin> load_plugin(std::string_view path);

/// Opens every plugin (a file named *.so or *.so.*) in each folder of a
/// ':'-separated list, in name order. Keeps going past a failure and returns
/// the first error; the plugins that opened stay loaded (see loaded_plugins()).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<plugin>> load_plugins(std::string_view folders);

/// Opens the plugins in the folders ROSTER_PLUGIN_PATH names (none when unset or empty).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<plugin>> load_plugins();

/// Closes a plugin that roster opened; its backends leave registered_backends().
/// Release its devices first: they run the plugin's code. An error if the
/// object stays mapped after dlclose (another handle, or GCC's STB_GNU_UNIQUE).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> unload_plugin(const plugin& p);

/// Returns the plugins roster has opened and not closed, in load order.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<plugin> loaded_plugins();

/// Loads ROSTER_PLUGIN_PATH on the first call in the process and returns that
/// load's result ever after; registered_backends() and find_backend() call it.
[[nodiscard]] ROSTER_API ROSTER_INLINE const expected<void>& load_plugin_path_once() noexcept;

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/plugins-inl.hpp>
#endif
