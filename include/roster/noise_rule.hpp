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
/// only the minimum applies. Timings taken interleaved, round by round, are
/// judged on their pooled rounds with a confidence bound instead
/// (judge_interleaved): what changes the choice is a gain whose lower 95%
/// bound exceeds the minimum. scripts/bench-check applies the same rule to
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

/// A median with its distribution-free confidence interval: the order
/// statistics x(k) and x(n+1-k) around it, k the largest with
/// P(Binomial(n, 1/2) < k) <= (1 - level) / 2. Fewer than six values give no
/// 95% interval; their bounds are the smallest and the largest.
struct median_bound {
  double median = 0.0;
  double low = 0.0;
  double high = 0.0;
};

/// Returns the median of the values and its confidence interval at `level`.
[[nodiscard]] ROSTER_API ROSTER_INLINE median_bound median_confidence(std::span<const double> values,
                                                                       double level = 0.95);

/// Decides from timings taken interleaved, round by round (current[i] and
/// candidate[i] in round i, so drift between rounds touches both alike): the
/// gain of each round, (current - candidate) / current, and the change only
/// when the lower bound of their median's 95% confidence interval exceeds
/// the minimum. The outcome's gain is that median, its spread the interval's
/// half width, its threshold the gain the median needed (the minimum plus
/// the median's distance to the lower bound). Unequal lengths compare the
/// rounds both have.
[[nodiscard]] ROSTER_API ROSTER_INLINE outcome judge_interleaved(std::span<const double> current,
                                                                 std::span<const double> candidate,
                                                                 double min_gain = noise_rule::min_gain);

/// Decides from the repeated timings of both sides (lower is better).
[[nodiscard]] ROSTER_API ROSTER_INLINE outcome judge(std::span<const double> current,
                                                           std::span<const double> candidate,
                                                           double min_gain = noise_rule::min_gain);

}  // namespace roster::noise_rule

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/base/noise_rule-inl.hpp>
#endif
