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

ROSTER_INLINE median_bound median_confidence(std::span<const double> values, double level) {
  median_bound b;
  if (values.empty()) return b;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  b.median = quantile(v, 0.5);
  const std::size_t n = v.size();
  // k: the largest with P(Binomial(n, 1/2) < k) <= (1 - level) / 2, by the
  // binomial's terms in logs (n may be in the thousands).
  const double tail = (1.0 - level) / 2.0, dn = static_cast<double>(n);
  double below = 0.0;  // P(X < k)
  std::size_t k = 0;
  for (std::size_t i = 0; i < n / 2; ++i) {
    const double di = static_cast<double>(i);
    const double term = std::exp(std::lgamma(dn + 1) - std::lgamma(di + 1) - std::lgamma(dn - di + 1) - dn * std::log(2.0));
    if (below + term > tail) break;
    below += term;
    k = i + 1;
  }
  if (k == 0) k = 1;  // too few values for the level: the extremes
  b.low = v[k - 1];
  b.high = v[n - k];
  return b;
}

ROSTER_INLINE outcome judge_interleaved(std::span<const double> current, std::span<const double> candidate,
                                        double min_gain) {
  outcome d;
  d.threshold = min_gain;
  std::vector<double> gains;
  for (std::size_t i = 0; i < std::min(current.size(), candidate.size()); ++i)
    if (current[i] > 0 && candidate[i] > 0) gains.push_back((current[i] - candidate[i]) / current[i]);
  if (gains.empty()) return d;  // nothing measured: no change
  const auto b = median_confidence(gains);
  d.gain = b.median;
  d.spread = (b.high - b.low) / 2.0;
  d.threshold = min_gain + (b.median - b.low);
  d.change = b.low > min_gain;
  return d;
}

ROSTER_INLINE outcome judge(std::span<const double> current, std::span<const double> candidate,
                                  double min_gain) {
  return judge(summarize(current), summarize(candidate), min_gain);
}

}  // namespace roster::noise_rule
