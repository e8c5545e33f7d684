#pragma once
// Private: ROSTER_TUNING=measure. Adapters a decision weighs and no record
// covers are measured once, briefly (a bounded budget each, printed), and
// recorded in the user's tuning file, as FFTW_MEASURE plans and cuDNN's
// benchmark mode do; the default reads what is recorded and never measures
// unasked. Under an MPI launcher one rank per node measures and writes; the
// others wait for its records (bounded) or go on without them.

#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/program.hpp>
#include <roster/select.hpp>
#include <roster/tuning/store.hpp>
#include <roster/noise_rule.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>
#include <roster/detail/decision/contention.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::detail {

/// The time one adapter's measurement may take.
inline constexpr std::chrono::milliseconds measure_budget{300};
/// Elements of each of triad's three arrays: 2^24 (128 MiB of doubles; 384
/// MiB in all), beyond the caches of today's CPUs and GPUs (an H200's L2 is
/// 50 MB), so the figure is the memory's and not a cache's.
inline constexpr std::size_t measure_elements = std::size_t{1} << 24;
/// What a rank waiting for local rank 0's records allows each adapter's
/// kernel build and first touch, which the budget does not count (PoCL's
/// build takes a second or more).
inline constexpr std::chrono::seconds measure_build_allowance{10};
/// A figure beyond this is no measurement (the bound a record may hold).
inline constexpr double max_plausible_gbps = tuning_max_gbps;

inline std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

// Times triad on one adapter, over arrays of measure_elements. A kernel
// builds on its first dispatch (a driver's JIT compile, PoCL's or a Vulkan
// driver's, can take longer than the whole budget) and arrays are touched by
// their first run: that run is not timed, and the budget starts after it.
// Then as many runs as fit in the budget, at least 3 (a slow device takes
// longer than the budget), at most 50.
inline expected<tuning_record> measure_triad(const backend_registration& backend, const adapter_info& a) {
  acquire_options options;
  options.wrap = true;
  auto d = open(backend, device_spec{a.backend, a.ordinal}, options);
  if (!d) return std::move(d).error();
  const element_type t = a.f64 ? element_type::f64 : element_type::f32;
  const std::size_t n = measure_elements;
  auto x = (*d)->allocate(t, n), y = (*d)->allocate(t, n), z = (*d)->allocate(t, n);
  if (!x || !y || !z)
    return make_error(errc::out_of_memory,
                      a.spec() + ": measure: no memory for three arrays of " + std::to_string(n) + " elements",
                      "free memory, or set ROSTER_TUNING=read");
  program fill;
  fill.fill(*y, 1.0).fill(*z, 2.0);
  program triad;
  triad.triad(*x, *y, *z, 0.5);
  if (auto ok = (*d)->dispatch(fill); !ok) return std::move(ok).error();
  if (auto ok = (*d)->dispatch(triad); !ok) return std::move(ok).error();  // untimed: build, first touch
  if (auto ok = (*d)->synchronize(); !ok) return std::move(ok).error();
  const auto start = std::chrono::steady_clock::now();
  const auto spent = [&] { return std::chrono::steady_clock::now() - start; };
  std::vector<double> gbps;
  while (gbps.size() < 50 && (spent() < measure_budget || (gbps.size() < 3 && spent() < 10 * measure_budget))) {
    auto ns = (*d)->timed_dispatch(triad);
    if (!ns) return std::move(ns).error();
    gbps.push_back(3.0 * static_cast<double>(n * size_of(t)) / std::max<double>(1.0, double(ns->count())));
  }
  for (const auto& b : {*x, *y, *z}) (void)(*d)->release(b);
  if (gbps.size() < 3)
    return make_error(errc::unavailable, a.spec() + ": measure: too few runs within " +
                                             std::to_string(10 * measure_budget.count()) + " ms",
                      "run roster-info bench for this adapter, or set ROSTER_TUNING=read");
  std::vector<double> times;  // time per byte: the rule's "lower is better"
  for (double g : gbps) times.push_back(1.0 / g);
  const auto s = noise_rule::summarize(times);
  if (1.0 / s.median > max_plausible_gbps)
    return make_error(errc::device_fault,
                      a.spec() + ": measure: triad at " + fixed(1.0 / s.median) +
                          " GB/s is beyond any memory's bandwidth (the device ran nothing?)",
                      "check the backend's dispatch with roster-info bench, or set ROSTER_TUNING=read");
  if (auto loaded = contention_problem(a, 1.0 / s.median); !loaded.empty())
    return make_error(errc::unavailable, loaded, contention_fix);
  tuning_record r;
  r.backend = a.backend;
  r.device = tuning_device_key(a);
  r.driver_version = a.driver_version;
  r.spec = a.spec();
  r.name = a.name;
  r.measured_at = utc_now_iso();
  r.elements = n;
  r.reps = static_cast<std::uint32_t>(gbps.size());
  r.figures.push_back({op::triad, t, 1.0 / s.median, s.spread});
  return r;
}

// The adapters this process tried to measure (or waited for), by spec, device
// key and tuning file: each is tried once per process, whatever came of it, so a file
// that cannot be written or an adapter that cannot be measured costs one
// attempt, not one per decision.
inline std::vector<std::string>& measure_attempted() {
  static std::vector<std::string> keys;
  return keys;
}

inline std::string measure_key(const adapter_info& a, const std::string& file) {
  return a.spec() + " " + tuning_device_key(a) + " " + file;
}

// When local rank 0 cannot record what it measured (a tuning folder it may
// not write, a full disk, an adapter it cannot measure), it says so to the
// waiting ranks of its launch, which then stop waiting: an empty file in a
// memory file system ($XDG_RUNTIME_DIR, else /dev/shm, else /tmp), since the
// tuning folder may be the very thing that cannot be written, and kept
// after rank 0 ends (a short rank 0, roster-info, ends before the others
// look). Its name holds the user, the launcher's daemon (the parent process
// the ranks of one launch on a node share) with its start time, so no later
// launch matches it, and the tuning file. Markers of launchers that are gone
// are removed by the next one made.
inline std::string launcher_start_time(long pid) {
  char buf[1024];
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {};
  const std::string_view stat(buf, static_cast<std::size_t>(n));
  std::size_t at = stat.rfind(')');  // the command name may hold spaces and ')'
  for (int field = 2; at != std::string_view::npos && field < 22; ++field) at = stat.find(' ', at + 1);
  if (at == std::string_view::npos) return {};
  const std::size_t end = stat.find(' ', at + 1);
  return std::string(stat.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1));
}

inline std::string marker_folder() {
  if (const auto run = env_text("XDG_RUNTIME_DIR"); run && run->starts_with('/')) return std::string(*run);
  struct stat st {};
  if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return "/tmp";
}

inline std::string marker_prefix() { return "roster-measure-failed-" + std::to_string(::getuid()) + "-"; }

inline std::string measure_failed_path(const std::string& file) {
  const long parent = static_cast<long>(::getppid());
  char hash[24];  // the ranks of a launch run one program: one std::hash
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string_view>{}(file)));
  return marker_folder() + "/" + marker_prefix() + std::to_string(parent) + "-" + launcher_start_time(parent) + "-" +
         hash;
}

// Removes this user's markers whose launcher is gone (or is another process now).
inline void remove_stale_markers(const std::string& folder) {
  DIR* d = ::opendir(folder.c_str());
  if (d == nullptr) return;
  const std::string prefix = marker_prefix();
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());  // PID-START-HASH
    const auto dash = rest.find('-'), dash2 = rest.find('-', dash + 1);
    if (dash == std::string_view::npos || dash2 == std::string_view::npos) continue;
    const long pid = std::strtol(std::string(rest.substr(0, dash)).c_str(), nullptr, 10);
    if (pid > 0 && launcher_start_time(pid) == rest.substr(dash + 1, dash2 - dash - 1)) continue;  // still there
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_uid == ::getuid())
      ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

// Local rank 0: says that it could not record.
inline void say_measure_failed(const std::string& file) {
  const std::string path = measure_failed_path(file);
  remove_stale_markers(path.substr(0, path.rfind('/')));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // else there already, or no place: the others wait their bound
}

// Whether the marker at path is there: a file of this user's (another
// user's of that name is not taken for it).
inline bool marker_there(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::getuid();
}

// A waiting rank: whether local rank 0 said it could not record.
inline bool measure_failed_said(const std::string& file) { return marker_there(measure_failed_path(file)); }

// One process measures at a time per tuning file: two at once spoil each
// other's figures. Takes the measure lock of `file` into `alone` (bounded by
// the time `missing` takes to measure; without it, the measuring goes on and
// the trace says why), then drops from `missing` what another process
// recorded meanwhile. Returns whether anything is left to measure.
inline bool measure_alone(const std::string& file, std::vector<adapter_info>& missing,
                          std::optional<measure_lock>& alone) {
  alone.emplace(file, missing.size() * (10 * measure_budget + measure_build_allowance) + std::chrono::seconds(2));
  if (alone->failure()) trace("ROSTER_TUNING=measure: " + alone->failure()->message());
  if (auto now = load_tuning(file)) {
    const std::size_t before = missing.size();
    std::erase_if(missing, [&](const adapter_info& a) { return find_tuning(now->records, a).record != nullptr; });
    if (missing.size() < before) reload_tuning();  // the decision reads what the other recorded
  }
  return !missing.empty();
}

// Measures the adapters of `circuits` that no record covers and records them
// (under a launcher, local rank 0 measures; the others wait for its records).
// Returns what happened, for the decision's reasons.
inline std::string measure_missing(std::span<const circuit* const> circuits, bool waiting_rank) {
  static std::mutex attempts;
  std::lock_guard once(attempts);
  std::vector<adapter_info> missing;
  for (const circuit* c : circuits) {
    missing.push_back(c->adapter);
    for (const auto& a : c->alternates) missing.push_back(a);
  }
  std::erase_if(missing, [](const adapter_info& a) { return find_tuning(current_tuning(), a).record != nullptr; });
  if (missing.empty()) return "ROSTER_TUNING=measure: every adapter weighed has a record";
  auto& tried = measure_attempted();
  const auto file = tuning_path();
  const std::string where = file ? *file : std::string();
  std::erase_if(missing, [&](const adapter_info& a) {
    return std::find(tried.begin(), tried.end(), measure_key(a, where)) != tried.end();
  });
  if (missing.empty()) return "ROSTER_TUNING=measure: what no record covers was tried once already in this process";
  for (const auto& a : missing) tried.push_back(measure_key(a, where));
  if (waiting_rank) {
    // Local rank 0 measures: wait for its records, bounded, then go on with what there is.
    const auto waited = missing.size() * (10 * measure_budget + measure_build_allowance) + std::chrono::seconds(2);
    const auto limit = std::chrono::steady_clock::now() + waited;
    const std::string word = measure_failed_path(where);  // rank 0's word, if it cannot record
    while (std::chrono::steady_clock::now() < limit) {
      reload_tuning();
      bool all = true;
      for (const auto& a : missing) all = all && find_tuning(current_tuning(), a).record != nullptr;
      if (all) return "ROSTER_TUNING=measure: local rank 0 measured; its records were read";
      if (marker_there(word)) {
        const std::string line = "local rank 0 could not record what it measured; decided with the records there are";
        std::fprintf(stderr,
                     "roster: ROSTER_TUNING=measure: %s\nFix: see local rank 0's \"ROSTER_TUNING=measure\" lines "
                     "for why\n",
                     line.c_str());
        return "ROSTER_TUNING=measure: " + line;
      }
      const timespec pause{0, 50'000'000};
      ::nanosleep(&pause, nullptr);
    }
    const std::string line =
        "local rank 0's records did not come in " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
        " s; decided without them";
    std::fprintf(stderr,
                 "roster: ROSTER_TUNING=measure: %s\nFix: see local rank 0's \"ROSTER_TUNING=measure\" lines for "
                 "why it did not record (a tuning file it cannot write, an adapter it cannot measure), or measure "
                 "once outside the launcher\n",
                 line.c_str());
    return "ROSTER_TUNING=measure: " + line;
  }
  std::optional<measure_lock> alone;
  if (file && !measure_alone(*file, missing, alone))
    return "ROSTER_TUNING=measure: another process recorded what no record covered";
  std::vector<tuning_record> made;
  std::string done;
  for (const auto& a : missing) {
    const backend_registration* b = find_backend(a.backend);
    if (b == nullptr) continue;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = measure_triad(*b, a);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string line = "roster: ROSTER_TUNING=measure: " + a.spec() + " (" + a.name + "): ";
    if (r) {
      line += "triad " + fixed(r->figures.front().gbps) + " GB/s, " + std::to_string(r->reps) + " runs in " +
              fixed(took, 2) + " s";
      made.push_back(std::move(*r));
      std::fprintf(stderr, "%s\n", line.c_str());
    } else {
      line += "not measured: " + std::string(r.error().what());
      std::fprintf(stderr, "%s\nFix: %s\n", line.c_str(), std::string(r.error().fix()).c_str());
    }
    done += (done.empty() ? "" : "; ") + line.substr(8);
  }
  if (!made.empty()) {
    // A measurement not kept is made again by every run: say so beside it.
    // This process still decides on it.
    const auto not_recorded = [&](const error& e) {
      say_measure_failed(where);
      std::fprintf(stderr, "roster: ROSTER_TUNING=measure: not recorded: %s\n", e.message().c_str());
      tuning_file in_memory;
      const auto now = current_tuning();
      in_memory.records.assign(now.begin(), now.end());
      for (auto& r : made) in_memory.records.push_back(std::move(r));
      use_tuning(std::move(in_memory));
      return done + "; not recorded, used by this process only: " + std::string(e.what());
    };
    if (!file) return not_recorded(file.error());
    if (auto ok = save_tuning(*file, made); !ok) return not_recorded(ok.error());
    reload_tuning();
    done += "; recorded in " + *file;
  }
  if (made.size() < missing.size()) say_measure_failed(where);  // the rest will not come
  return done;
}

}  // namespace roster::detail
