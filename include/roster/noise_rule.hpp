#pragma once
/// The noise rule: the one rule for every measured choice (tuning, ranking, kernel variants):
/// keep what runs now unless a candidate is faster by more than the noise.
///
///   - Each side is timed repeatedly; its centre is the median and its spread
///     the interquartile range over the median (linear interpolation between
///     order statistics), so one slow outlier moves neither.
///   - The gain is how much less time the candidate takes, relative to the
///     current choice: (current - candidate) / current.
///   - The change is made only when the gain exceeds both the larger spread
///     of the two sides and a minimum (3% unless told), so two medians that
///     differ by noise, or by a margin too small to matter, change nothing.
///
/// With medians alone (a record that kept no samples) the spread is zero and
/// only the minimum applies. scripts/bench-check applies the same rule to
/// Google Benchmark repetitions (its compare()), and tests/core/decision_test
/// checks both on the same recorded timings. Public, so that a code (and
/// roster-info) judges its own measurements the way roster judges its own.

#include <roster/config.hpp>

#include <span>

namespace roster::noise_rule {

/// The minimum relative gain a measured choice needs before it changes.
inline constexpr double min_gain = 0.03;

/// A side of a comparison: the median and the relative spread of its timings.
struct timing_summary {
  double median = 0.0;
  double spread = 0.0;  ///< interquartile range over the median
};

/// The outcome of a comparison, with the figures that decided it.
struct outcome {
  bool change = false;    ///< true when the candidate wins beyond the noise
  double gain = 0.0;      ///< (current - candidate) / current; negative when the candidate is slower
  double spread = 0.0;    ///< the larger spread of the two sides
  double threshold = 0.0; ///< the gain needed: max(spread, minimum)
};

/// Returns the q-quantile (0..1) of the values, interpolating linearly.
[[nodiscard]] ROSTER_API ROSTER_INLINE double quantile(std::span<const double> values, double q);

/// Returns the median and relative interquartile spread of repeated timings.
[[nodiscard]] ROSTER_API ROSTER_INLINE timing_summary summarize(std::span<const double> timings);

/// Decides whether to switch from the current choice to a candidate, given
/// the summaries of their timings (lower is better).
[[nodiscard]] ROSTER_API ROSTER_INLINE outcome judge(timing_summary current, timing_summary candidate,
                                                           double min_gain = noise_rule::min_gain);

/// Decides from the repeated timings of both sides (lower is better).
[[nodiscard]] ROSTER_API ROSTER_INLINE outcome judge(std::span<const double> current,
                                                           std::span<const double> candidate,
                                                           double min_gain = noise_rule::min_gain);

}  // namespace roster::noise_rule

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/base/noise_rule-inl.hpp>
#endif
