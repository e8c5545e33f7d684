#pragma once
// Private: measuring on a machine that others load. A pool whose threads
// cannot get the cores (two busy processes on two cores) ran triad at 0.1-0.2
// GB/s with a spread near 0, where one plain thread under the same load ran
// 80-112: a figure of the load, not of the device, which decisions then
// trusted. An adapter that runs on the host's cores is therefore checked
// against one plain thread of this process timed right after it, and is not
// recorded when it falls far below it. Processes that measure at once spoil
// each other's figures, so measuring holds a lock of its own per tuning file
// (the save keeps the file's own lock).

#include <roster/backend.hpp>
#include <roster/detail/base/file_io.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace roster::detail {

/// A pool measured below this share of one plain thread is not scheduled:
/// the contended pools measured 0.1-0.2% of one thread, while a device that
/// is slow of itself stays far above it (lavapipe's triad on the 2-core box:
/// 9.8 GB/s against one thread's 43.5, 22%, which a quarter once refused).
inline constexpr double contended_share = 0.05;
/// Elements of each of the one-thread baseline's three arrays (96 MiB in all).
inline constexpr std::size_t baseline_elements = std::size_t{1} << 22;

// Whether an adapter's figure rests on the host's cores being free for it.
inline bool runs_on_host_cores(const adapter_info& a) noexcept { return a.type == device_type::cpu; }

// Triad on one plain thread of this process, in GB/s: the best of 3 runs over
// arrays of baseline_elements doubles. Empty when the arrays cannot be had.
inline std::optional<double> one_thread_triad_gbps() {
  const std::size_t n = baseline_elements;
  std::unique_ptr<double[]> a(new (std::nothrow) double[n]), b(new (std::nothrow) double[n]),
      c(new (std::nothrow) double[n]);
  if (!a || !b || !c) return std::nullopt;
  std::fill_n(b.get(), n, 1.0);
  std::fill_n(c.get(), n, 2.0);
  std::fill_n(a.get(), n, 0.0);
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    double* __restrict x = a.get();
    const double* __restrict y = b.get();
    const double* __restrict z = c.get();
    for (std::size_t i = 0; i < n; ++i) x[i] = y[i] + 0.5 * z[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // The result is read, so the loop is not left out.
    if (s > 0 && a[n / 2] == 2.0) best = std::max(best, 3.0 * static_cast<double>(n * sizeof(double)) / s * 1e-9);
  }
  if (best <= 0) return std::nullopt;
  return best;
}

// The hook tests replace to stand for a loaded machine: the one-thread
// baseline, in GB/s.
inline std::optional<double> (*one_thread_baseline)() = &one_thread_triad_gbps;

// Says why `gbps`, triad measured on `a`, cannot be recorded because the
// host's cores were not free for it; empty when it can (or `a` does not run
// on them).
inline std::string contention_problem(const adapter_info& a, double gbps) {
  if (!runs_on_host_cores(a)) return {};
  const auto one = one_thread_baseline();
  if (!one || gbps >= contended_share * *one) return {};
  return a.spec() + ": triad measured " + fixed(gbps) + " GB/s, below " +
         std::to_string(static_cast<int>(contended_share * 100)) + "% of one plain thread's " + fixed(*one) +
         " GB/s timed right after it: the pool's threads could not get the cores (other processes keep them busy), "
         "so the figure is the load's and is not recorded";
}

// The Fix of contention_problem().
inline constexpr std::string_view contention_fix =
    "measure when the machine is not busy (stop the other processes, or run roster-info bench on an idle node), or "
    "give roster fewer threads with ROSTER_CPU_THREADS";

/// Holds the measure lock of a tuning file, FILE.measure.lock beside the file
/// at the end of FILE's links, so processes that record into one file never
/// measure at once.
class measure_lock {
 public:
  explicit measure_lock(const std::string& tuning_file, std::chrono::milliseconds wait) {
    auto target = link_target(tuning_file, "the tuning file");
    if (!target) {
      failure_ = std::move(target).error();
      return;
    }
    if (const auto slash = target->rfind('/'); slash != std::string::npos && slash > 0)
      if (auto made = make_folders(target->substr(0, slash), "the tuning folder"); !made) {
        failure_ = std::move(made).error();
        return;
      }
    lock_ = std::make_unique<file_lock>(*target + ".measure", wait);
    if (!lock_->held()) failure_ = lock_->failure("measuring: the measure lock").value;
  }
  /// Returns why the lock is not held (nothing when it is).
  [[nodiscard]] const std::optional<error>& failure() const noexcept { return failure_; }
  /// Whether it is not held because another process kept it past the wait.
  [[nodiscard]] bool busy() const noexcept { return lock_ != nullptr && lock_->busy(); }

 private:
  std::unique_ptr<file_lock> lock_;
  std::optional<error> failure_;
};

}  // namespace roster::detail
