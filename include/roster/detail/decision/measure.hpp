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
#include <roster/detail/open/gpu_list.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>
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

/// The time one adapter's measurement may take: a circuit of n adapters is
/// measured in one window of n times this.
inline constexpr std::chrono::milliseconds measure_budget{300};
/// Elements of each of triad's three arrays, at least: 2^24 (128 MiB of
/// doubles; 384 MiB in all), beyond the caches of today's GPUs (an H200's L2
/// is 50 MB). An adapter that runs on the host's cores measures at least four
/// times the host's last-level caches (measure_elements_for), so the figure
/// is the memory's and not a cache's.
inline constexpr std::size_t measure_elements = std::size_t{1} << 24;
/// The rounds of one window: each adapter of the circuit runs once a round.
inline constexpr std::size_t measure_min_rounds = 3, measure_max_rounds = 60;
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

// The bytes of the host's last-level caches, all of them (each counted once,
// by its shared_cpu_list): what an array smaller than it may sit in. 0 when
// sysfs does not say.
inline std::uint64_t host_last_level_cache_bytes() {
  std::uint64_t total = 0;
  int top = 0;
  std::vector<std::string> seen;
  const std::string root = sysfs_root() + "/devices/system/cpu/cpu";
  for (int cpu = 0; cpu < 4096; ++cpu) {
    const std::string base = root + std::to_string(cpu) + "/cache/index";
    if (read_small_file(base + "0/level").empty()) break;
    for (int i = 0; i < 8; ++i) {
      const std::string index = base + std::to_string(i) + "/";
      const std::string level = read_small_file(index + "level"), size = read_small_file(index + "size"),
                        shared = read_small_file(index + "shared_cpu_list");
      if (level.empty() || size.empty()) break;
      if (read_small_file(index + "type") == "Instruction") continue;
      const int l = std::atoi(level.c_str());
      char* unit = nullptr;
      std::uint64_t bytes = std::strtoull(size.c_str(), &unit, 10);
      if (*unit == 'K' || *unit == 'k') bytes <<= 10;
      else if (*unit == 'M') bytes <<= 20;
      if (l < top) continue;
      if (l > top) {
        top = l;
        total = 0;
        seen.clear();
      }
      if (std::find(seen.begin(), seen.end(), shared) != seen.end()) continue;
      seen.push_back(shared);
      total += bytes;
    }
  }
  return total;
}

// The element count of each array measuring `a`: measure_elements, or four
// times the host's last-level caches over three arrays where `a` runs on the
// host's cores (a CPU pool, lavapipe, PoCL) and those caches are larger.
inline std::size_t measure_elements_for(const adapter_info& a) {
  if (!runs_on_host_cores(a)) return measure_elements;
  static const std::uint64_t cache = host_last_level_cache_bytes();
  const std::uint64_t need = 4 * cache / (3 * size_of(a.f64 ? element_type::f64 : element_type::f32));
  std::size_t n = measure_elements;
  while (n < need && n < (std::size_t{1} << 31)) n <<= 1;
  return n;
}

// Rounds over `count` adapters, interleaved: each round times every adapter
// once, the first of a round turning from round to round (A B, B A, ...), so
// drift and order touch them alike. `timed(i)` runs adapter i once and gives
// its seconds, or an error, after which adapter i sits out (its error in
// `failed[i]`). As many rounds as fit in `budget`, at least `min_rounds`
// (within ten budgets: a slow device takes longer), at most `max_rounds`.
// Returns the seconds of each adapter, round by round.
template <class Timed>
std::vector<std::vector<double>> interleaved_rounds(std::size_t count, std::chrono::nanoseconds budget,
                                                    std::size_t min_rounds, std::size_t max_rounds,
                                                    std::vector<std::optional<error>>& failed, Timed&& timed) {
  std::vector<std::vector<double>> seconds(count);
  failed.resize(count);
  const auto start = std::chrono::steady_clock::now();
  const auto spent = [&] { return std::chrono::steady_clock::now() - start; };
  for (std::size_t round = 0; round < max_rounds; ++round) {
    if (!(spent() < budget || (round < min_rounds && spent() < 10 * budget))) break;
    bool any = false;
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t i = (round + k) % count;
      if (failed[i]) continue;
      expected<double> t = timed(i);
      if (!t) {
        failed[i] = std::move(t).error();
        continue;
      }
      seconds[i].push_back(*t);
      any = true;
    }
    if (!any) break;
  }
  return seconds;
}

// One adapter's part in a window: its device, its arrays and its triad.
struct measure_subject {
  adapter_info adapter;
  std::unique_ptr<device> dev;
  std::vector<buffer> arrays;
  program triad;
  std::size_t elements = 0;
  element_type type = element_type::f64;
};

// Opens `a`, allocates and fills its three arrays of n elements, and runs
// triad once untimed: a kernel builds on its first dispatch (a driver's JIT
// compile, PoCL's or a Vulkan driver's, can take longer than the whole
// budget) and arrays are touched by their first run, so the window starts
// after it.
inline expected<measure_subject> prepare_measure(const backend_registration& backend, const adapter_info& a,
                                                 std::size_t n) {
  acquire_options options;
  options.wrap = true;
  auto d = open(backend, device_spec{a.backend, a.ordinal}, options);
  if (!d) return std::move(d).error();
  measure_subject s;
  s.adapter = a;
  s.dev = std::move(*d);
  s.type = a.f64 ? element_type::f64 : element_type::f32;
  s.elements = n;
  for (int i = 0; i < 3; ++i) {
    auto b = s.dev->allocate(s.type, n);
    if (!b) {
      for (const auto& made : s.arrays) (void)s.dev->release(made);
      return make_error(errc::out_of_memory,
                        a.spec() + ": measure: no memory for three arrays of " + std::to_string(n) + " elements",
                        "free memory, or set ROSTER_TUNING=read");
    }
    s.arrays.push_back(*b);
  }
  program fill;
  fill.fill(s.arrays[1], 1.0).fill(s.arrays[2], 2.0);
  s.triad.triad(s.arrays[0], s.arrays[1], s.arrays[2], 0.5);
  for (const program* p : {&fill, &s.triad})
    if (auto ok = s.dev->dispatch(*p); !ok) return std::move(ok).error();
  if (auto ok = s.dev->synchronize(); !ok) return std::move(ok).error();
  return s;
}

// The record of one adapter's window: the median of its rounds' GB/s, their
// spread, and the median's confidence bound; or why it is not recorded (too
// few runs, a figure beyond any memory, a pool that could not get the cores).
// `relative`, when the window interleaved several adapters: each round's time
// over that round's geometric mean of all of them, so the bound says how well
// the adapter's place among them is known, with the drift they shared taken out.
inline expected<tuning_record> record_of_rounds(const adapter_info& a, element_type t, std::size_t n,
                                                std::span<const double> seconds, std::span<const double> relative) {
  const bool interleaved = !relative.empty();
  if (seconds.size() < measure_min_rounds)
    return make_error(errc::unavailable, a.spec() + ": measure: too few runs within " +
                                             std::to_string(10 * measure_budget.count()) + " ms",
                      "run roster-info bench for this adapter, or set ROSTER_TUNING=read");
  const double bytes = 3.0 * static_cast<double>(n * size_of(t));
  std::vector<double> per_byte;  // time per byte: the rule's "lower is better"
  for (double s : seconds) per_byte.push_back(std::max(s, 1e-9) / bytes);
  const auto s = noise_rule::summarize(per_byte);
  const auto b = noise_rule::median_confidence(per_byte);
  double gbps = 1e-9 / s.median;
  if (interleaved) {
    // The adapter's median place among the window's adapters times the
    // window's median round: the same drift-free ratio between any two of
    // them as their places, on the scale of their own medians.
    std::vector<double> round_means;
    for (std::size_t r = 0; r < relative.size(); ++r) round_means.push_back(seconds[r] / relative[r]);
    gbps = bytes * 1e-9 / (noise_rule::quantile(relative, 0.5) * noise_rule::quantile(round_means, 0.5));
  }
  if (gbps > max_plausible_gbps)
    return make_error(errc::device_fault,
                      a.spec() + ": measure: triad at " + fixed(gbps) +
                          " GB/s is beyond any memory's bandwidth (the device ran nothing?)",
                      "check the backend's dispatch with roster-info bench, or set ROSTER_TUNING=read");
  if (auto loaded = contention_problem(a, gbps); !loaded.empty())
    return make_error(errc::unavailable, loaded, contention_fix);
  tuning_record r;
  r.backend = a.backend;
  r.device = tuning_device_key(a);
  r.driver_version = a.driver_version;
  r.spec = a.spec();
  r.name = a.name;
  r.measured_at = utc_now_iso();
  r.elements = n;
  r.reps = static_cast<std::uint32_t>(seconds.size());
  r.interleaved = interleaved;
  double bound = s.median > 0 ? (b.high - b.low) / 2.0 / s.median : 0.0;
  if (interleaved) {
    const auto place = noise_rule::median_confidence(relative);
    bound = place.median > 0 ? (place.high - place.low) / 2.0 / place.median : 0.0;
  }
  bound = std::min(99.0, bound);
  r.figures.push_back({op::triad, t, gbps, std::min(99.0, s.spread), bound});
  return r;
}

// Measures triad on the adapters of one circuit in one window, interleaved
// (measure_elements_for the largest of them, on every one), and returns each
// adapter's record or why it has none, in the order given.
inline std::vector<expected<tuning_record>> measure_circuit(std::span<const adapter_info> adapters) {
  std::size_t n = 0;
  for (const auto& a : adapters) n = std::max(n, measure_elements_for(a));
  std::vector<expected<tuning_record>> out;
  std::vector<measure_subject> subjects;
  std::vector<std::size_t> at;  // out's index of each subject
  for (const auto& a : adapters) {
    const backend_registration* b = find_backend(a.backend);
    if (b == nullptr) {
      out.emplace_back(make_error(errc::not_found, a.spec() + ": measure: no backend \"" + a.backend + "\"",
                                  "set ROSTER_TUNING=read"));
      continue;
    }
    auto s = prepare_measure(*b, a, n);
    if (!s) {
      out.emplace_back(std::move(s).error());
      continue;
    }
    at.push_back(out.size());
    out.emplace_back(make_error(errc::internal, a.spec() + ": measure: not run", "report this"));
    subjects.push_back(std::move(*s));
  }
  std::vector<std::optional<error>> failed;
  const auto seconds = interleaved_rounds(
      subjects.size(), subjects.size() * std::chrono::nanoseconds(measure_budget), measure_min_rounds,
      measure_max_rounds, failed, [&](std::size_t i) -> expected<double> {
        auto ns = subjects[i].dev->timed_dispatch(subjects[i].triad);
        if (!ns) return std::move(ns).error();
        return static_cast<double>(ns->count()) * 1e-9;
      });
  // Each round's time over the round's geometric mean, over the rounds every
  // adapter still measuring ran.
  std::size_t rounds = std::numeric_limits<std::size_t>::max(), together = 0;
  for (std::size_t i = 0; i < subjects.size(); ++i)
    if (!failed[i]) {
      rounds = std::min(rounds, seconds[i].size());
      ++together;
    }
  std::vector<std::vector<double>> relative(subjects.size());
  if (together > 1)
    for (std::size_t r = 0; r < rounds; ++r) {
      double logs = 0;
      for (std::size_t i = 0; i < subjects.size(); ++i)
        if (!failed[i]) logs += std::log(std::max(seconds[i][r], 1e-12));
      const double mean = std::exp(logs / static_cast<double>(together));
      for (std::size_t i = 0; i < subjects.size(); ++i)
        if (!failed[i]) relative[i].push_back(std::max(seconds[i][r], 1e-12) / mean);
    }
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    auto& s = subjects[i];
    for (const auto& b : s.arrays) (void)s.dev->release(b);
    if (failed[i]) out[at[i]] = std::move(*failed[i]);
    else out[at[i]] = record_of_rounds(s.adapter, s.type, s.elements, seconds[i], relative[i]);
  }
  return out;
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

// Marks the new record of the adapter that leads circuit `c` (tuning_record::leads):
// the standing preference (the adapter whose record, current or stale, led
// when it was measured) unless another's new record beats it beyond the
// noise; else the adapter the records put ahead of the one the backend rank
// puts first; else none.
// So a re-measure inside the noise leaves the preference where it stood.
inline void mark_leader(const circuit& c, std::span<const adapter_info> group,
                        std::vector<expected<tuning_record>>& records) {
  std::vector<adapter_info> members{c.adapter};
  members.insert(members.end(), c.alternates.begin(), c.alternates.end());
  std::vector<tuning_record> now;  // each member's record after this measurement
  std::optional<std::string> standing;
  for (const auto& a : members) {
    const auto m = find_tuning(current_tuning(), a);
    const tuning_record* before = m.record != nullptr ? m.record : m.stale;
    if (before != nullptr && before->leads) standing = a.spec();
    const auto at = std::find(group.begin(), group.end(), a);
    if (at != group.end()) {
      auto& fresh = records[static_cast<std::size_t>(at - group.begin())];
      if (fresh) now.push_back(*fresh);
    } else if (m.record != nullptr) {
      now.push_back(*m.record);
    }
  }
  for (auto& r : now) r.leads = standing && r.spec == *standing;
  for (auto& r : records)
    if (r) r->leads = false;
  std::vector<adapter_info> unmeasured = members;  // the order without records
  order_adapters(members, now, {}, std::nullopt, nullptr);
  const auto lead = std::find_if(now.begin(), now.end(), [&](const tuning_record& r) { return r.spec == members.front().spec(); });
  if (lead == now.end()) return;
  // The lead a record did not put there needs no mark.
  order_adapters(unmeasured, {}, {}, std::nullopt, nullptr);
  if (!(standing && *standing == lead->spec) && unmeasured.front().spec() == lead->spec) return;
  for (std::size_t i = 0; i < group.size(); ++i)
    if (records[i] && group[i].spec() == lead->spec) records[i]->leads = true;
}

// Measures `missing`, circuit by circuit (each circuit's in one window,
// interleaved), printing each adapter's figure or why it has none: the
// records into `made`, the lines into `done`.
inline void measure_by_circuit(std::span<const circuit* const> circuits, const std::vector<adapter_info>& missing,
                               std::vector<tuning_record>& made, std::string& done) {
  for (const circuit* c : circuits) {
    std::vector<adapter_info> group;
    for (const auto& a : missing)
      if (a == c->adapter || std::find(c->alternates.begin(), c->alternates.end(), a) != c->alternates.end())
        group.push_back(a);
    if (group.empty()) continue;
    const auto t0 = std::chrono::steady_clock::now();
    auto records = measure_circuit(group);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    mark_leader(*c, group, records);
    for (std::size_t i = 0; i < group.size(); ++i) {
      const auto& a = group[i];
      auto& r = records[i];
      std::string line = "roster: ROSTER_TUNING=measure: " + a.spec() + " (" + a.name + "): ";
      if (r) {
        line += "triad " + fixed(r->figures.front().gbps) + " GB/s, " + std::to_string(r->reps) + " runs" +
                (group.size() > 1 ? " interleaved with " + std::to_string(group.size() - 1) + " more" : std::string()) +
                ", " + fixed(took, 2) + " s";
        made.push_back(std::move(*r));
        std::fprintf(stderr, "%s\n", line.c_str());
      } else {
        line += "not measured: " + std::string(r.error().what());
        std::fprintf(stderr, "%s\nFix: %s\n", line.c_str(), std::string(r.error().fix()).c_str());
      }
      done += (done.empty() ? "" : "; ") + line.substr(8);
    }
  }
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
  measure_by_circuit(circuits, missing, made, done);
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
