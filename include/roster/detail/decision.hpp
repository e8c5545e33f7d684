#pragma once
// The one rule for every measured choice (tuning, ranking, kernel variants):
// keep what runs now unless a candidate is faster by more than the noise.
//
//   - Each side is timed repeatedly; its centre is the median and its spread
//     the interquartile range over the median (linear interpolation between
//     order statistics), so one slow outlier moves neither.
//   - The gain is how much less time the candidate takes, relative to the
//     current choice: (current - candidate) / current.
//   - The change is made only when the gain exceeds both the larger spread
//     of the two sides and a minimum (3% unless told), so two medians that
//     differ by noise, or by a margin too small to matter, change nothing.
//
// With medians alone (a record that kept no samples) the spread is zero and
// only the minimum applies. scripts/bench-check applies the same rule to
// Google Benchmark repetitions (its compare()), and tests/core/decision_test
// checks both on the same recorded timings.

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace roster::detail {

/// The minimum relative gain a measured choice needs before it changes.
inline constexpr double decision_min_gain = 0.03;

/// A side of a comparison: the median and the relative spread of its timings.
struct timing_summary {
  double median = 0.0;
  double spread = 0.0;  ///< interquartile range over the median
};

/// The outcome of a comparison, with the figures that decided it.
struct rule_outcome {
  bool change = false;    ///< true when the candidate wins beyond the noise
  double gain = 0.0;      ///< (current - candidate) / current; negative when the candidate is slower
  double spread = 0.0;    ///< the larger spread of the two sides
  double threshold = 0.0; ///< the gain needed: max(spread, minimum)
};

/// Returns the q-quantile (0..1) of the values, interpolating linearly.
inline double quantile(std::span<const double> values, double q) {
  if (values.empty()) return 0.0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

/// Returns the median and relative interquartile spread of repeated timings.
inline timing_summary summarize(std::span<const double> timings) {
  timing_summary s;
  s.median = quantile(timings, 0.5);
  if (s.median > 0) s.spread = (quantile(timings, 0.75) - quantile(timings, 0.25)) / s.median;
  return s;
}

/// Decides whether to switch from the current choice to a candidate, given
/// the summaries of their timings (lower is better).
inline rule_outcome decide(timing_summary current, timing_summary candidate, double min_gain = decision_min_gain) {
  rule_outcome d;
  d.spread = std::max(current.spread, candidate.spread);
  d.threshold = std::max(d.spread, min_gain);
  if (!(current.median > 0) || !(candidate.median > 0)) return d;  // nothing measured: no change
  d.gain = (current.median - candidate.median) / current.median;
  d.change = d.gain > d.threshold;
  return d;
}

/// Decides from the repeated timings of both sides (lower is better).
inline rule_outcome decide(std::span<const double> current, std::span<const double> candidate,
                       double min_gain = decision_min_gain) {
  return decide(summarize(current), summarize(candidate), min_gain);
}

}  // namespace roster::detail
