#pragma once
// Private: opening and closing backend plugins, and the list of open ones.

#include <roster/plugins.hpp>

#include <roster/inventory.hpp>
#include <roster/detail/backend/plugin_hub.hpp>
#include <roster/detail/backend/plugin_check.hpp>
#include <roster/detail/backend/plugin_refusals.hpp>
#include <roster/detail/backend/plugin_trust.hpp>
#include <roster/detail/base/environment.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

namespace roster {

namespace detail {
// Readers (backends_in_use) and unloads meet in a grace period, as in RCU:
// a reader counts itself in the current epoch's counter; an unload first
// takes the plugin's entries out of the inventory, then flips the epoch and
// waits for the old epoch's readers only. A reader never blocks, and a stream
// of new readers cannot hold an unload back: they count in the new epoch and
// see the inventory without the plugin (their load of the epoch acquires the
// flip, which the detach precedes). A reader that counted itself in the old
// epoch checks the epoch again: if it moved, it counts again in the new one;
// if not, its count came before the flip in the seq_cst order, so the unload
// waits for it. No fences (ThreadSanitizer models none), only seq_cst atomics.
struct plugin_registry {
  std::mutex mutex;            // the list of loaded plugins
  std::mutex unload_mutex;     // one unload at a time
  std::vector<plugin> loaded;
  // The loaded plugins that hold an STB_GNU_UNIQUE symbol (handle, its name):
  // glibc never unloads those, so unload_plugin refuses them up front.
  std::vector<std::pair<void*, std::string>> never_unmapped;
  // The loaded plugins with devices open (handle, how many): every device
  // their factories return is counted by the open path until destroyed.
  std::vector<std::pair<void*, std::size_t>> held;
  std::atomic<unsigned> epoch{0};
  std::atomic<long> readers[2]{};
};
// Process-wide (default visibility), so the executable and libroster agree.
ROSTER_API ROSTER_INLINE plugin_registry& plugins() noexcept {
  static constinit plugin_registry r;
  return r;
}
// This thread's backends_in_use: how deep, and in which epoch's counter.
struct plugin_use_state {
  int depth = 0;
  unsigned epoch = 0;
};
ROSTER_API ROSTER_INLINE plugin_use_state& plugin_use() noexcept {
  static constinit thread_local plugin_use_state state;
  return state;
}

ROSTER_API ROSTER_INLINE plugin_refusals& refused_plugin_list() noexcept {
  static constinit plugin_refusals r;
  return r;
}

inline std::string dl_error_text() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlerror");
}
inline bool plugin_file_name(std::string_view name) noexcept {
  return (name.size() > 3 && name.substr(name.size() - 3) == ".so") || name.find(".so.") != std::string_view::npos;
}
// What a path names: 'f' a regular file, 'd' a folder, 0 anything else or nothing.
inline char path_kind(const std::string& path) noexcept {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : 0;
}
// The absolute, normalized form of a path (no "." or ".." parts, no "//").
inline std::string absolute_path(std::string_view path) {
  std::string joined(path);
  if (!path.starts_with('/')) {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) joined = std::string(cwd) + "/" + joined;
  }
  std::vector<std::string_view> parts;
  std::string_view rest = joined;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (auto part : parts) out.append("/").append(part);
  return out.empty() ? std::string("/") : out;
}
// Why `folder` (from a plugin path) is not a folder roster can list, or
// nothing: it is missing, a file, something else, or cannot be reached.
inline std::optional<error> plugin_folder_problem(const std::string& folder) {
  struct stat st{};
  if (::stat(folder.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT)
      return error(errc::not_found, "plugin folder '" + folder + "' does not exist",
                   "create the folder, or remove it from ROSTER_PLUGIN_PATH");
    return error(errc::io, "plugin folder '" + folder + "' cannot be reached: " + std::strerror(err),
                 "check each folder on the way: one may be a file, or not searchable by this user (chmod u+x); "
                 "or remove it from ROSTER_PLUGIN_PATH");
  }
  if (S_ISDIR(st.st_mode)) return std::nullopt;
  const std::string what = S_ISREG(st.st_mode) ? "a file" : "a device, FIFO or socket";
  return error(errc::invalid_argument,
               "plugin folder '" + folder + "' is " + what + ", not a folder: ROSTER_PLUGIN_PATH names folders",
               "name the folder that holds the plugin in ROSTER_PLUGIN_PATH, or open one file with "
               "roster::load_plugin('" + folder + "')");
}
// One entry of a plugin folder named like a plugin (*.so, *.so.*): a file to
// open, or why it is not one.
struct plugin_entry {
  std::string path;
  std::optional<error> refusal;
};
// Why an entry named like a plugin is not a file to open, or nothing.
inline std::optional<error> plugin_entry_problem(const std::string& full) {
  struct stat st{};
  if (::stat(full.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) return std::nullopt;
    return error(errc::invalid_argument, "plugin '" + full + "' is not a regular file (a device, FIFO or socket)",
                 "leave its folder out of ROSTER_PLUGIN_PATH");
  }
  const int err = errno;
  struct stat lst{};
  const bool link = ::lstat(full.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
  std::string to;
  if (link) {
    char buf[4096];
    const ssize_t n = ::readlink(full.c_str(), buf, sizeof buf);
    if (n > 0) to = " ('" + std::string(buf, static_cast<std::size_t>(n)) + "')";
  }
  if (link && err == ENOENT)
    return error(errc::not_found, "plugin '" + full + "' is a link to nothing" + to,
                 "point the link at a plugin file, or leave its folder out of ROSTER_PLUGIN_PATH");
  if (link && err == ELOOP)
    return error(errc::invalid_argument, "plugin '" + full + "' is a loop of links" + to + ": " + std::strerror(err),
                 "point the link at a plugin file, or leave its folder out of ROSTER_PLUGIN_PATH");
  return error(errc::io, "plugin '" + full + "' cannot be reached" + to + ": " + std::strerror(err),
               "make it and what it links to readable by this user, or leave its folder out of ROSTER_PLUGIN_PATH");
}
// The entries of a folder named like plugins, sorted by name; an error when
// the folder cannot be listed.
inline expected<std::vector<plugin_entry>> plugin_files(const std::string& folder) {
  std::vector<plugin_entry> entries;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    const int err = errno;
    return make_error(errc::io, "plugin folder '" + folder + "' cannot be opened: " + std::strerror(err),
                      "make it readable and searchable by this user (chmod u+rx '" + folder +
                          "'), or remove it from ROSTER_PLUGIN_PATH");
  }
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (!plugin_file_name(name)) continue;
    const std::string full = folder + "/" + std::string(name);
    struct stat st{};
    if (::stat(full.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;  // a folder named *.so: no plugin file
    entries.push_back(plugin_entry{full, plugin_entry_problem(full)});
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end(),
            [](const plugin_entry& a, const plugin_entry& b) { return a.path < b.path; });
  return entries;
}
}  // namespace detail

ROSTER_INLINE expected<plugin> load_plugin(std::string_view path) {
  if (path.empty() || detail::path_kind(std::string(path)) != 'f')
    return make_error(errc::not_found, "plugin '" + std::string(path) + "': no such file",
                      "pass the path of a backend plugin (a shared object built with ROSTER_REGISTER_BACKEND)");
  const std::string full = detail::absolute_path(path);
  // Only from a place no one else can write, as sudo and ssh insist.
  if (auto loose = detail::refuse_untrusted(detail::untrusted_plugin(full))) return detail::refused(std::move(*loose));
  // Read from the file first: dlopen runs any library's start-up code.
  std::string unique;  // a symbol that keeps it mapped for good
  if (auto mark = detail::check_plugin_file(full, &unique); !mark) return detail::refused(std::move(mark).error());
  // Named before dlopen, so a plugin whose start-up code ends the process is
  // named by the trace. dlopen runs that code, which may call roster: no lock held.
  detail::trace("plugin: opening '" + full + "'");
  void* handle = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    return detail::refused(error(errc::unavailable, "plugin '" + full + "': dlopen failed: " + detail::dl_error_text(),
                                 "check that the file is a shared object for this machine whose libraries resolve "
                                 "(ldd '" + full + "'), or leave its folder out of ROSTER_PLUGIN_PATH"));
  if (auto unseen = detail::plugin_hub_unseen(handle, full)) {
    dlclose(handle);
    return std::move(*unseen);
  }
  auto& r = detail::plugins();
  std::unique_lock lock(r.mutex);
  for (const auto& p : r.loaded)
    if (p.handle == handle) {
      plugin same = p;
      lock.unlock();
      dlclose(handle);  // dlopen counted one more reference: give it back
      return same;
    }
  r.loaded.push_back(plugin{full, handle});
  if (!unique.empty()) {
    r.never_unmapped.emplace_back(handle, unique);
    detail::trace("plugin: '" + full + "' holds the STB_GNU_UNIQUE symbol " + detail::printable(unique) +
                  ", so the C library will keep it loaded; unload_plugin refuses it (build it with -fno-gnu-unique)");
  }
  return r.loaded.back();
}

ROSTER_INLINE expected<std::vector<plugin>> load_plugins(std::string_view folders) {
  std::vector<plugin> out;
  std::optional<error> first;
  // Each refusal is recorded; the first one is returned.
  auto refuse = [&](error e) {
    if (!first) first = detail::refused(std::move(e));
    else (void)detail::refused(std::move(e));
  };
  while (true) {
    const auto colon = folders.find(':');
    const std::string_view folder = folders.substr(0, colon);
    if (!folder.empty()) {
      if (auto problem = detail::plugin_folder_problem(std::string(folder))) {
        refuse(std::move(*problem));
      } else if (auto loose = detail::refuse_untrusted(
                     detail::untrusted_plugin_folder(detail::absolute_path(folder)))) {
        // Not one file of a folder others can write is opened.
        refuse(std::move(*loose));
      } else if (auto entries = detail::plugin_files(std::string(folder)); !entries) {
        refuse(std::move(entries).error());
      } else {
        for (auto& entry : *entries) {
          if (entry.refusal) {
            refuse(std::move(*entry.refusal));
            continue;
          }
          auto p = load_plugin(entry.path);  // records its own refusals
          if (p)
            out.push_back(std::move(*p));
          else if (!first)
            first = std::move(p).error();
        }
      }
    }
    if (colon == std::string_view::npos) break;
    folders.remove_prefix(colon + 1);
  }
  if (first) return std::move(*first);
  return out;
}

ROSTER_INLINE expected<std::vector<plugin>> load_plugins() {
  const auto path = detail::env_text(detail::env_plugin_path);
  if (!path || path->empty()) return std::vector<plugin>{};
  auto r = load_plugins(*path);
  if (!r) return std::move(r).error().prepend("ROSTER_PLUGIN_PATH");
  return r;
}

ROSTER_INLINE backends_in_use::backends_in_use() noexcept {
  auto& me = detail::plugin_use();
  if (me.depth++ > 0) return;
  auto& r = detail::plugins();
  unsigned e = r.epoch.load();
  for (;;) {
    r.readers[e & 1u].fetch_add(1);
    const unsigned now = r.epoch.load();
    if (now == e) break;
    r.readers[e & 1u].fetch_sub(1);
    e = now;
  }
  me.epoch = e & 1u;
}

ROSTER_INLINE backends_in_use::~backends_in_use() {
  auto& me = detail::plugin_use();
  if (--me.depth > 0) return;
  detail::plugins().readers[me.epoch].fetch_sub(1);
}

ROSTER_INLINE void* detail::hold_plugin_of(const void* code) noexcept {
  auto& r = plugins();
  {
    std::lock_guard lock(r.mutex);
    if (r.loaded.empty()) return nullptr;
  }
  Dl_info info{};  // outside the mutex: dladdr takes the loader's lock, which dlclose holds
  if (code == nullptr || dladdr(code, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  try {
    std::lock_guard lock(r.mutex);
    for (const auto& q : r.loaded)
      if (q.path == info.dli_fname) {
        for (auto& [handle, count] : r.held)
          if (handle == q.handle) return ++count, q.handle;
        r.held.emplace_back(q.handle, 1);
        return q.handle;
      }
  } catch (...) {
  }
  return nullptr;
}

ROSTER_INLINE void detail::release_plugin_hold(void* handle) noexcept {
  if (handle == nullptr) return;
  auto& r = plugins();
  std::lock_guard lock(r.mutex);
  for (auto at = r.held.begin(); at != r.held.end(); ++at)
    if (at->first == handle) {
      if (--at->second == 0) r.held.erase(at);
      return;
    }
}

namespace detail {
// Devices of plugin `handle` still open; plugins' mutex held.
inline std::size_t devices_open(const plugin_registry& r, void* handle) noexcept {
  for (const auto& [h, count] : r.held)
    if (h == handle) return count;
  return 0;
}
inline unexpected devices_still_open(const std::string& path, std::size_t n) {
  return make_error(errc::unavailable,
                    "plugin '" + path + "' is not unloaded: " + std::to_string(n) + " of its devices " +
                        (n == 1 ? "is" : "are") + " still open, and each call to one would run code that unloading unmaps",
                    "destroy the devices it opened (acquire()'s unique_ptr, a try_ device) before unloading it; "
                    "a device get_device() opened is kept by the cache for the process, so its plugin stays loaded");
}
}  // namespace detail

ROSTER_INLINE expected<void> unload_plugin(const plugin& p) {
  auto& r = detail::plugins();
  if (detail::plugin_use().depth > 0)
    return make_error(errc::invalid_argument,
                      "plugin '" + p.path +
                          "': unload_plugin was called while this thread holds a roster::backends_in_use (or "
                          "from a backend's own code), so it would wait for itself",
                      "end the backends_in_use scope first, and never unload a plugin from inside a backend's "
                      "factory, enumerator or device");
  std::lock_guard one_at_a_time(r.unload_mutex);
  std::string path;
  std::size_t index = 0;  // its place in load order, to put it back if it stays loaded
  {
    std::lock_guard lock(r.mutex);
    auto at = std::find_if(r.loaded.begin(), r.loaded.end(), [&](const plugin& q) { return q.handle == p.handle; });
    if (p.handle == nullptr || at == r.loaded.end())
      return make_error(errc::not_found, "plugin '" + p.path + "' is not loaded by roster",
                        "unload a plugin that roster::load_plugin or load_plugins returned, once");
    if (const std::size_t n = detail::devices_open(r, p.handle); n > 0) return detail::devices_still_open(at->path, n);
    // Read from its file at load: dlclose would leave it mapped and listed.
    for (const auto& [handle, symbol] : r.never_unmapped)
      if (handle == p.handle)
        return make_error(errc::unavailable,
                          "plugin '" + at->path + "' cannot be unloaded: it defines the STB_GNU_UNIQUE symbol " +
                              detail::printable(symbol) +
                              ", and the C library never unloads a module holding one; it stays loaded and its "
                              "backends stay registered",
                          "build the plugin with -fno-gnu-unique (GCC gives each inline variable and each static "
                          "of an inline function that binding by default), or keep it loaded");
    path = at->path;
    index = static_cast<std::size_t>(at - r.loaded.begin());
    r.loaded.erase(at);
  }
  // A plugin that stays mapped stays listed, so it can be unloaded later.
  auto relist = [&](void* handle) {
    std::lock_guard lock(r.mutex);
    r.loaded.insert(r.loaded.begin() + static_cast<std::ptrdiff_t>(std::min(index, r.loaded.size())),
                    plugin{path, handle});
  };
  // 1. Readers from now on see the inventory without the plugin.
  detail::module_node* node = detail::detach_module_of(p.handle);
  // 2. The grace period: wait for the readers that may have seen it.
  const unsigned old = r.epoch.fetch_add(1) & 1u;
  for (int spins = 0; r.readers[old].load() != 0; ++spins) {
    if (spins < 64) {
      ::sched_yield();
    } else {
      const timespec pause{0, 50'000};
      ::nanosleep(&pause, nullptr);
    }
  }
  // A device opened by a reader the grace period waited for counts now; no
  // new one can be opened (the backends are out of the inventory).
  std::size_t open_now = 0;
  {
    std::lock_guard lock(r.mutex);
    open_now = detail::devices_open(r, p.handle);
  }
  if (open_now > 0) {
    if (node != nullptr) detail::attach_module(*node);
    relist(p.handle);
    return detail::devices_still_open(path, open_now);
  }
  // 3. dlclose runs the plugin's exit code, which may call roster: no mutex
  // of the inventory or the list held.
  if (dlclose(p.handle) != 0) {
    const std::string why = detail::dl_error_text();
    if (node != nullptr) detail::attach_module(*node);
    relist(p.handle);
    return make_error(errc::device_fault, "plugin '" + path + "': dlclose failed: " + why,
                      "check that the handle came from roster::load_plugin");
  }
  if (void* still = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD); still != nullptr) {
    // Still mapped: its backends come back.
    if (node != nullptr) detail::attach_module(*node);
    relist(still);  // roster's reference now: the one NOLOAD took
    return make_error(errc::unavailable,
                      "plugin '" + path + "' stays loaded after dlclose, so its backends stay registered",
                      "close every other dlopen handle to it, and build it with -fno-gnu-unique (GCC marks a "
                      "module holding STB_GNU_UNIQUE symbols as not unloadable)");
  }
  return {};
}

ROSTER_INLINE std::vector<error> refused_plugins() {
  auto& r = detail::refused_plugin_list();
  std::lock_guard lock(r.mutex);
  std::vector<error> out = r.list;
  if (r.dropped > 0) out.push_back(detail::refusals_dropped(r.dropped));
  return out;
}

ROSTER_INLINE std::vector<plugin> loaded_plugins() {
  auto& r = detail::plugins();
  std::lock_guard lock(r.mutex);
  return r.loaded;
}

ROSTER_INLINE const expected<void>& load_plugin_path_once() noexcept {
  // After the first load: one acquire load, no lock, no allocation.
  static constinit std::atomic<const expected<void>*> done{nullptr};
  if (const auto* r = done.load(std::memory_order_acquire)) [[likely]]
    return *r;
  // A plugin whose start-up code asks for the backends would re-enter here
  // while the static below is being initialised: answer it with success.
  static thread_local bool loading = false;
  static const expected<void> in_progress{};
  if (loading) return in_progress;
  loading = true;
  static const expected<void> result = []() -> expected<void> {
    try {
      auto r = load_plugins();
      if (!r) return std::move(r).error();
      return {};
    } catch (...) {
      return make_error(errc::internal, "ROSTER_PLUGIN_PATH: loading the plugins threw",
                        "check the plugin folders, or call roster::load_plugins() to see the error");
    }
  }();
  loading = false;
  done.store(&result, std::memory_order_release);
  return result;
}

}  // namespace roster
