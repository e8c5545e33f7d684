#pragma once
// The decision rule's bodies (roster/noise_rule.hpp): compiled into the library,
// or included by decision.hpp in header-only mode.

#include <roster/noise_rule.hpp>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace roster::noise_rule {

ROSTER_INLINE double quantile(std::span<const double> values, double q) {
  if (values.empty()) return 0.0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

ROSTER_INLINE timing_summary summarize(std::span<const double> timings) {
  timing_summary s;
  s.median = quantile(timings, 0.5);
  if (s.median > 0) s.spread = (quantile(timings, 0.75) - quantile(timings, 0.25)) / s.median;
  return s;
}

ROSTER_INLINE outcome judge(timing_summary current, timing_summary candidate, double min_gain) {
  outcome d;
  d.spread = std::max(current.spread, candidate.spread);
  d.threshold = std::max(d.spread, min_gain);
  if (!(current.median > 0) || !(candidate.median > 0)) return d;  // nothing measured: no change
  d.gain = (current.median - candidate.median) / current.median;
  d.change = d.gain > d.threshold;
  return d;
}

ROSTER_INLINE outcome judge(std::span<const double> current, std::span<const double> candidate,
                                  double min_gain) {
  return judge(summarize(current), summarize(candidate), min_gain);
}

}  // namespace roster::noise_rule
