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
/// returns the plugin already loaded. Refused (see refused_plugins()) unless
/// the file, its folder and each folder above are writable by no one but
/// their owner and root (a folder above may be sticky, as /tmp is) and, when
/// the process runs as root, owned by root; ROSTER_PLUGIN_ALLOW_INSECURE=1
/// (or true, yes, on) lifts that rule. The file is then read, and refused unless it is a shared
/// object for this machine with the roster_plugin_abi section of this plugin
/// ABI, which ROSTER_REGISTER_BACKEND emits: no code of another library runs.
/// ROSTER_TRACE names the file before dlopen runs its start-up code.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<plugin> load_plugin(std::string_view path);

/// Opens every plugin (a file named *.so or *.so.*) in each folder of a
/// ':'-separated list, in name order; a folder that others than its owner and
/// root can write (or above which one can) is refused whole, as load_plugin
/// refuses a file. A folder that is missing, is a file, or cannot be listed,
/// and an entry named like a plugin that is a link to nothing, a loop of links
/// or not a regular file, is refused with its reason (see refused_plugins()).
/// Keeps going past a failure and returns the first error; the plugins that
/// opened stay loaded (see loaded_plugins()).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<plugin>> load_plugins(std::string_view folders);

/// Opens the plugins in the folders ROSTER_PLUGIN_PATH names (none when unset or empty).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<plugin>> load_plugins();

/// Closes a plugin that roster opened; its backends leave registered_backends().
/// Waits until no thread holds a backends_in_use, so nothing roster is reading
/// or running of the plugin is unmapped under it. Release the plugin's devices
/// first: they run its code; while any is open (held by code or by the device
/// cache, which keeps get_device()'s devices for the process) the plugin is
/// not unloaded, with an error. An error if this thread holds a backends_in_use
/// (it would wait for itself); if the plugin defines an STB_GNU_UNIQUE symbol
/// (GCC's default for inline variables; build it with -fno-gnu-unique), which
/// glibc never unloads, before anything is closed; or if the object stays
/// mapped after dlclose (another handle). In both last cases it stays in
/// loaded_plugins() and its backends stay registered.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> unload_plugin(const plugin& p);

/// Keeps every loaded plugin loaded while it lives: unload_plugin waits until
/// no thread holds one. registered_backends(), find_backend(), open_adapter(),
/// enumerate_adapters(), acquire(), acquire_preferred() and circuits() hold
/// one while they run. Hold one yourself across code that keeps what they
/// return (a backend_entry, a registration, its id) while another thread may
/// unload a plugin:
///
///     roster::backends_in_use pin;
///     for (const auto& b : roster::registered_backends()) use(b.id(), *b.registration);
///
/// Nests within a thread at the cost of a thread-local count. Unloads wait for
/// readers, and new readers wait for an unload that is waiting, so a stream
/// of readers does not starve it.
class backends_in_use {
 public:
  ROSTER_API ROSTER_INLINE backends_in_use() noexcept;
  ROSTER_API ROSTER_INLINE ~backends_in_use();
  backends_in_use(const backends_in_use&) = delete;
  backends_in_use& operator=(const backends_in_use&) = delete;
};

/// Returns why each plugin file (or folder) roster refused was not opened, in
/// the order met: loose permissions, not a roster plugin, another plugin ABI,
/// dlopen failed. Keeps the first 1024; past them, a last entry says how many
/// more were refused.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<error> refused_plugins();

/// Returns the plugins roster has opened and not closed, in load order.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<plugin> loaded_plugins();

namespace detail {
/// Returns the loaded plugin whose code holds `code` (a backend's factory)
/// and counts one more device of it open; null, nothing counted, for code
/// outside every plugin. unload_plugin refuses a plugin with devices open.
[[nodiscard]] ROSTER_API ROSTER_INLINE void* hold_plugin_of(const void* code) noexcept;
/// Counts one device of the plugin `handle` closed.
ROSTER_API ROSTER_INLINE void release_plugin_hold(void* handle) noexcept;
}  // namespace detail

/// Loads ROSTER_PLUGIN_PATH on the first call in the process and returns that
/// load's result ever after; registered_backends() and find_backend() call it.
[[nodiscard]] ROSTER_API ROSTER_INLINE const expected<void>& load_plugin_path_once() noexcept;

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/plugins-inl.hpp>
#endif
