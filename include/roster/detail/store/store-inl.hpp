#pragma once
// Private: tuning files on disk and the records in use.

#include <roster/tuning/store.hpp>
#include <roster/env.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/file_io.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <new>
#include <string>

namespace roster {

namespace detail {

// The name a corrupt tuning file is kept under: PATH.corrupt-YYYYMMDDTHHMMSSZ.
inline std::string corrupt_name(const std::string& path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return path + ".corrupt-" + stamp;
}

inline std::vector<std::string> tuning_paths_warning(std::vector<error>& warnings);

// How to name another file in place of path, for a Fix: a site file is named
// in ROSTER_TUNING_PATH; a file written other than the user's own (roster-info
// bench --export FILE) is named by the caller; the user's own file moves with
// XDG_CACHE_HOME.
inline std::string tuning_place_fix(const std::string& path, bool reading) {
  const auto own = tuning_path();
  if (own && *own == path) return std::string(cache_place_fix);
  if (reading) {
    std::vector<error> ignored;
    const auto listed = tuning_paths_warning(ignored);
    if (std::find(listed.begin(), listed.end(), path) != listed.end())
      return "list a regular file in ROSTER_TUNING_PATH in its place (or remove it from the list)";
    return std::string(cache_place_fix);
  }
  return "give the path of a file in a folder you may write to";
}

// The tuning files of ROSTER_TUNING_PATH, then the user's; an entry that is
// not an absolute path is skipped, with a warning added to `warnings`, and
// the others are still read.
inline std::vector<std::string> tuning_paths_warning(std::vector<error>& warnings) {
  std::vector<std::string> out;
  if (const auto list = env_text("ROSTER_TUNING_PATH")) {
    std::string_view rest = *list;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view item = trim(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
      if (item.empty()) continue;
      std::string path(item);
      if (item.starts_with("~/")) {
        const auto home = env_text("HOME");
        if (!home || !home->starts_with('/')) {
          warnings.emplace_back(errc::invalid_argument,
                                "ROSTER_TUNING_PATH: '" + path + "' starts with ~/ but HOME" +
                                    (!home || home->empty() ? std::string(" is not set")
                                                            : "='" + std::string(*home) + "' is not an absolute path") +
                                    "; that entry is skipped, the others are read",
                                "write the folder out in full, or set HOME to an absolute path");
          continue;
        }
        path = std::string(*home) + path.substr(1);
      }
      if (!path.starts_with('/')) {
        warnings.emplace_back(errc::invalid_argument,
                              "ROSTER_TUNING_PATH: '" + path +
                                  "' is not an absolute path; that entry is skipped, the others are read",
                              "list absolute paths of tuning files, separated by ':', e.g. "
                              "ROSTER_TUNING_PATH=/site/roster/tuning.json:~/.cache/roster/tuning.json");
        continue;
      }
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
    }
  }
  // A relative XDG_CACHE_HOME is ignored (tuning_path): said here, so that
  // the file being under HOME is no surprise.
  const auto xdg = env_text("XDG_CACHE_HOME");
  auto own = tuning_path();
  if (xdg && !xdg->empty() && !xdg->starts_with('/') && own)
    warnings.emplace_back(errc::invalid_argument,
                          "XDG_CACHE_HOME='" + std::string(*xdg) +
                              "' is not an absolute path, so it is ignored (as the XDG Base Directory rules say); "
                              "the tuning file is " + *own,
                          "set XDG_CACHE_HOME to an absolute path, or unset it");
  if (own && std::find(out.begin(), out.end(), *own) == out.end()) out.push_back(*own);
  return out;
}

// Merges one new record into the file's: under the same driver, what the new
// one did not measure again is kept.
inline void merge_record(tuning_file& merged, const tuning_record& r) {
  auto same = std::find_if(merged.records.begin(), merged.records.end(),
                           [&](const tuning_record& x) {
                             return x.backend == r.backend && same_device_key(x.device, r.device);
                           });
  if (same == merged.records.end()) {
    merged.records.push_back(r);
    return;
  }
  tuning_record next = r;
  if (same->driver_version == r.driver_version) {
    for (const auto& k : same->kernels)
      if (std::none_of(next.kernels.begin(), next.kernels.end(), [&](const kernel_choice& x) {
            return x.op == k.op && x.type == k.type && x.size_class == k.size_class;
          }))
        next.kernels.push_back(k);
    for (const auto& g : same->sync_shapes)
      if (std::none_of(next.sync_shapes.begin(), next.sync_shapes.end(),
                       [&](const sync_timing& x) { return x.shape == g.shape; }))
        next.sync_shapes.push_back(g);
    if (next.figures.empty()) {
      next.figures = same->figures;
      next.elements = same->elements;
      next.reps = same->reps;
    }
  }
  *same = std::move(next);
}

// The records in use, as snapshots that are never changed once published:
// reload_tuning() retires the current one instead of freeing it, so a span
// from current_tuning() on one thread stays valid while another reloads (as
// the inventory and circuits keep their old tables). A process reloads after
// each bench it runs, so the retired ones stay few and small.
struct tuning_cache {
  std::mutex mutex;
  std::atomic<const tuning_file*> current{nullptr};
  bool handed = false;  // use_tuning gave the records: the file is not read
  std::vector<std::unique_ptr<const tuning_file>> snapshots;
};
ROSTER_API ROSTER_INLINE tuning_cache& the_tuning_cache() {
  static tuning_cache cache;  // function-local: no global constructor
  return cache;
}

}  // namespace detail

ROSTER_INLINE expected<std::string> tuning_path() {
  // Only an absolute folder counts: the XDG Base Directory rules ignore a
  // relative XDG_CACHE_HOME, and a relative HOME (HOME=rel, HOME=., HOME='~'
  // unexpanded) would put the file under whatever folder the process runs in.
  const auto xdg = detail::env_text("XDG_CACHE_HOME");
  if (xdg && xdg->starts_with('/')) return std::string(*xdg) + "/roster/tuning.json";
  const auto home = detail::env_text("HOME");
  if (home && home->starts_with('/')) return std::string(*home) + "/.cache/roster/tuning.json";
  auto said = [](const char* name, const std::optional<std::string_view>& v) {
    return !v || v->empty() ? std::string(name) + " is not set"
                            : std::string(name) + "='" + std::string(*v) + "' is not an absolute path";
  };
  return make_error(errc::not_found,
                    "tuning file: " + said("XDG_CACHE_HOME", xdg) + ", and " + said("HOME", home) +
                        "; no tuning file is read or written",
                    "set XDG_CACHE_HOME (or HOME) to the absolute path of a folder roster may write to");
}

ROSTER_INLINE expected<std::vector<std::string>> tuning_paths() {
  std::vector<error> warnings;
  auto paths = detail::tuning_paths_warning(warnings);
  for (const auto& w : warnings) detail::tuning_trace("warning: " + w.message());
  return paths;
}

ROSTER_INLINE std::vector<error> tuning_path_warnings() {
  std::vector<error> warnings;
  const auto paths = detail::tuning_paths_warning(warnings);
  const auto own = tuning_path();
  for (const auto& path : paths) {
    if (own && *own == path) continue;  // the user's own file is made on the first save
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
      warnings.emplace_back(errc::not_found,
                            "ROSTER_TUNING_PATH: '" + path + "' does not exist; no record is read from it",
                            "correct the path, or remove it from ROSTER_TUNING_PATH");
  }
  return warnings;
}

ROSTER_INLINE expected<tuning_mode> tuning_mode_from_env() {
  auto mode = env::choice("ROSTER_TUNING", {"read", "measure", "off"});
  if (!mode) return std::move(mode).error();
  if (!*mode) return tuning_mode::read;
  return static_cast<tuning_mode>(**mode);
}

ROSTER_INLINE expected<tuning_file> load_tuning(const std::string& path) try {
  auto text = detail::read_file(path, "tuning file", detail::max_file_bytes, detail::tuning_place_fix(path, true));
  if (!text) return std::move(text).error();
  if (!*text) return tuning_file{};  // missing: no records yet
  auto file = parse_tuning(**text);
  if (!file) return std::move(file).error().prepend(path);
  for (auto& w : file->warnings) w.prepend(path);
  return file;
} catch (const std::bad_alloc&) {
  return make_error(errc::out_of_memory, path + ": out of memory while reading the tuning file; its records are ignored",
                    "give the process more memory (the file is left as it is)");
}

ROSTER_INLINE expected<void> save_tuning(const std::string& path, std::span<const tuning_record> records,
                                        std::string* kept_corrupt, std::vector<error>* warnings) try {
  // A figure beyond any memory's bandwidth is a timing fault: not recorded.
  std::vector<tuning_record> checked(records.begin(), records.end());
  std::vector<error> said;
  for (auto& r : checked) detail::drop_implausible_figures(r, "new record", said);
  for (auto& w : said) detail::tuning_trace("warning: " + w.message());
  if (warnings != nullptr) warnings->insert(warnings->end(), said.begin(), said.end());
  // A record the reader would refuse is never written: the next read would
  // refuse the whole file (detail::record_fault holds the reader's rules).
  for (std::size_t i = 0; i < checked.size(); ++i)
    if (const std::string fault = detail::record_fault(checked[i]); !fault.empty())
      return make_error(errc::invalid_argument,
                        path + ": new record " + std::to_string(i) + " (backend '" + checked[i].backend +
                            "', device '" + checked[i].device + "'): " + fault +
                            "; a file holding it could not be read back, so no record was written",
                        "give the record a backend and a device, one figure per op and type, spreads from 0 "
                        "up to 100 and finite timings above 0, as roster-info bench writes them");
  // Read-merge-write under the lock. A file that cannot be read (no
  // permission, a FIFO, an I/O error) is never replaced: its records may be
  // good. A corrupt file is kept beside the new one, and its valid records
  // are carried over. A file past tuning_record_limit is not replaced either:
  // the records roster did not read would be lost.
  const std::string place_fix = detail::tuning_place_fix(path, false);
  return detail::locked_replace(path, "tuning file", [&]() -> expected<std::string> {
    auto text = detail::read_file(path, "tuning file", detail::max_file_bytes, place_fix);
    if (!text) {
      const auto& e = text.error();
      return make_error(e.code(), std::string(e.what()) + "; it is not replaced, and no record was written",
                        e.fix());
    }
    tuning_file merged;
    if (*text) {
      if (auto file = parse_tuning(**text)) {
        merged = std::move(*file);
        for (auto& w : merged.warnings) {
          detail::tuning_trace("warning: " + w.prepend(path).message());
          if (warnings != nullptr) warnings->push_back(w);
        }
      } else if (file.error().code() == errc::out_of_memory) {
        return std::move(file).error().prepend(path);
      } else if (file.error().code() == errc::unsupported) {
        // A newer roster's file: neither replaced nor set aside, so that
        // roster keeps its records (an older one would lose what it adds).
        return make_error(errc::unsupported, path + ": " + std::string(file.error().what()) + "; no record was written",
                          "upgrade roster, or " +
                              (place_fix == detail::cache_place_fix
                                   ? std::string("point XDG_CACHE_HOME at another folder for this roster's records")
                                   : "name another file"));
      } else {
        // Kept beside the file itself: where tuning.json is a link, beside
        // the file it leads to (a hard link to the link would lead to the
        // new text once the save replaces that file).
        auto target = detail::link_target(path, "tuning file");
        if (!target) return std::move(target).error();
        // A second corrupt file within the same second takes the next free
        // name (.1, .2, ...): the first one kept is never replaced.
        const std::string stem = detail::corrupt_name(*target);
        std::string aside = stem;
        int linked = ::link(target->c_str(), aside.c_str());
        for (int n = 1; linked != 0 && errno == EEXIST && n < 100; ++n) {
          aside = stem + "." + std::to_string(n);
          linked = ::link(target->c_str(), aside.c_str());
        }
        if (linked != 0)
          return make_error(errc::io,
                            path + ": " + std::string(file.error().what()) + "; it cannot be kept as " + aside +
                                ": " + std::strerror(errno) + ", so it is not replaced",
                            "let roster keep it aside: make its folder writable or free space there, then run the "
                            "bench again (the file is left as it is)");
        if (kept_corrupt) *kept_corrupt = aside;
        if (auto some = detail::parse_tuning_records(**text, true)) merged = std::move(*some);
        detail::tuning_trace("corrupt file kept as " + aside + "; " + std::to_string(merged.records.size()) +
                             " valid records carried over");
      }
    }
    for (const auto& r : checked) detail::merge_record(merged, r);
    if (merged.records_left_out > 0 || merged.records.size() > tuning_record_limit)
      return make_error(errc::io,
                        path + ": it would hold " + std::to_string(merged.records.size() + merged.records_left_out) +
                            " records, more than the " + std::to_string(tuning_record_limit) +
                            " roster reads from one file; it is not replaced, and no record was written",
                        "take the records of devices no longer in use out of the file, or export to another file "
                        "(roster-info bench --export)");
    std::string out = to_json(merged);
    // What is written reads back: a rule the writer and reader came to
    // disagree on loses the file's records, so it is checked here, once.
    if (auto back = parse_tuning(out); !back)
      return make_error(errc::io,
                        path + ": the new text would not read back (" + std::string(back.error().what()) +
                            "); it is not replaced, and no record was written",
                        "report this as a bug of roster; the file is unchanged");
    return out;
  }, place_fix);
} catch (const std::bad_alloc&) {
  return make_error(errc::out_of_memory, path + ": out of memory while saving tuning records; the file is unchanged",
                    "give the process more memory (the file is unchanged)");
}

ROSTER_INLINE std::span<const tuning_record> current_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  if (const tuning_file* f = cache.current.load(std::memory_order_acquire)) return f->records;
  auto file = std::make_unique<tuning_file>();
  auto paths = tuning_paths();
  if (!paths) detail::tuning_trace("warning: " + paths.error().message());
  for (const auto& path : paths ? *paths : std::vector<std::string>{}) {
    auto loaded = load_tuning(path);
    if (!loaded) {
      detail::tuning_trace("warning: " + loaded.error().message());
      continue;
    }
    for (const auto& w : loaded->warnings) detail::tuning_trace("warning: " + w.message());
    if (!loaded->records.empty())
      detail::tuning_trace("read " + std::to_string(loaded->records.size()) + " records from " + path);
    for (auto& r : loaded->records) file->records.push_back(std::move(r));
  }
  cache.current.store(file.get(), std::memory_order_release);
  cache.snapshots.push_back(std::move(file));
  return cache.current.load(std::memory_order_relaxed)->records;
}

ROSTER_INLINE std::span<const tuning_record> tuning_in_use() noexcept {
  const tuning_file* f = detail::the_tuning_cache().current.load(std::memory_order_acquire);
  return f != nullptr ? std::span<const tuning_record>(f->records) : std::span<const tuning_record>{};
}

ROSTER_INLINE void use_tuning(tuning_file records) {
  auto& cache = detail::the_tuning_cache();
  auto file = std::make_unique<const tuning_file>(std::move(records));
  std::lock_guard lock(cache.mutex);
  cache.handed = true;
  cache.current.store(file.get(), std::memory_order_release);
  cache.snapshots.push_back(std::move(file));
}

ROSTER_INLINE void reload_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  cache.handed = false;
  cache.current.store(nullptr, std::memory_order_release);  // the old snapshot stays alive
}

ROSTER_INLINE std::span<const kernel_choice> kernel_choices_for(const adapter_info& a) {
  auto m = detail::find_tuning_traced(current_tuning(), a);
  if (m.record == nullptr) return {};
  return m.record->kernels;
}

ROSTER_INLINE std::optional<double> triad_bandwidth(const adapter_info& a) {
  auto m = find_tuning(current_tuning(), a);
  if (m.record == nullptr) return std::nullopt;
  return m.record->triad_bandwidth();
}

ROSTER_INLINE std::vector<std::string> split_shapes_for(const adapter_info& a) {
  return split_shapes(detail::find_tuning_traced(current_tuning(), a).record, a);
}

ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters) {
  return order_by_tuning(adapters, current_tuning());
}

}  // namespace roster
