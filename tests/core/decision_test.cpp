// The decision rule on recorded timings (tests/core/decision_cases.txt), and
// its parts on small hand-checked inputs.
#include <roster/noise_rule.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rd = roster::noise_rule;

namespace {

struct recorded_case {
  std::string name;
  std::vector<double> current, candidate;
  bool change = false;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<recorded_case> load_cases() {
  std::ifstream f(ROSTER_DECISION_CASES);
  std::vector<recorded_case> out;
  std::string line;
  while (std::getline(f, line)) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> parts;
    std::stringstream ss(line);
    for (std::string p; std::getline(ss, p, '|');) parts.push_back(trim(p));
    if (parts.size() != 4) continue;
    recorded_case c{parts[0], {}, {}, parts[3] == "yes"};
    for (auto [text, dst] : {std::pair{&parts[1], &c.current}, {&parts[2], &c.candidate}}) {
      std::stringstream v(*text);
      for (double x; v >> x;) dst->push_back(x);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

TEST(Decision, QuantileInterpolates) {
  const std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(rd::quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(rd::quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(rd::quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(rd::quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(rd::quantile(std::vector<double>{}, 0.5), 0.0);
}

TEST(Decision, SpreadIsTheInterquartileRangeOverTheMedian) {
  const auto s = rd::summarize(std::vector<double>{90, 100, 110, 100, 100});
  EXPECT_DOUBLE_EQ(s.median, 100.0);
  EXPECT_DOUBLE_EQ(s.spread, 0.0);  // quartiles both 100
  const auto w = rd::summarize(std::vector<double>{80, 90, 100, 110, 120});
  EXPECT_DOUBLE_EQ(w.spread, 0.2);
}

TEST(Decision, MediansAloneNeedTheMinimum) {
  EXPECT_FALSE(rd::judge({1000, 0}, {980, 0}).change);  // 2%
  EXPECT_TRUE(rd::judge({1000, 0}, {960, 0}).change);   // 4%
  EXPECT_FALSE(rd::judge({1000, 0}, {960, 0}, 0.05).change);
  EXPECT_FALSE(rd::judge({0, 0}, {960, 0}).change);  // nothing measured
  const auto d = rd::judge({1000, 0.02}, {900, 0.08});
  EXPECT_DOUBLE_EQ(d.spread, 0.08);
  EXPECT_DOUBLE_EQ(d.threshold, 0.08);
  EXPECT_NEAR(d.gain, 0.1, 1e-12);
  EXPECT_TRUE(d.change);
}

TEST(Decision, TheMediansConfidenceIntervalIsTheBinomialsOrderStatistics) {
  std::vector<double> v;
  for (int i = 50; i >= 1; --i) v.push_back(i);
  const auto b = rd::median_confidence(v);  // n = 50: the 18th and the 33rd of the sorted values
  EXPECT_DOUBLE_EQ(b.median, 25.5);
  EXPECT_DOUBLE_EQ(b.low, 18.0);
  EXPECT_DOUBLE_EQ(b.high, 33.0);
  const auto few = rd::median_confidence(std::vector<double>{3, 1, 2, 5});  // no 95% interval: the extremes
  EXPECT_DOUBLE_EQ(few.low, 1.0);
  EXPECT_DOUBLE_EQ(few.high, 5.0);
  const auto six = rd::median_confidence(std::vector<double>{6, 5, 4, 3, 2, 1});  // P(X < 1) = 1/64
  EXPECT_DOUBLE_EQ(six.low, 1.0);
  EXPECT_DOUBLE_EQ(six.high, 6.0);
}

TEST(Decision, InterleavedRoundsChangeOnlyWhenTheLowerBoundClearsTheMinimum) {
  std::vector<double> current, faster, close;
  for (int i = 0; i < 40; ++i) {
    const double drift = 1.0 + 0.01 * i;  // the host slows: both sides alike
    const double jitter = (i % 5 - 2) * 0.004;
    current.push_back(100 * drift);
    faster.push_back(90 * drift * (1 + jitter));
    close.push_back(98 * drift * (1 + jitter));
  }
  const auto win = rd::judge_interleaved(current, faster);
  EXPECT_TRUE(win.change);
  EXPECT_NEAR(win.gain, 0.1, 0.005);
  EXPECT_GT(win.threshold, rd::min_gain);
  EXPECT_FALSE(rd::judge_interleaved(current, close).change);  // 2%: not beyond the minimum
  // The same timings judged as two windows: the drift (40%) is the spread, and hides a 10% gain.
  EXPECT_FALSE(rd::judge(current, faster).change);
  EXPECT_FALSE(rd::judge_interleaved(std::vector<double>{}, faster).change);
}

TEST(Decision, RecordedTimings) {
  const auto cases = load_cases();
  ASSERT_EQ(cases.size(), 6u) << "read " << ROSTER_DECISION_CASES;
  for (const auto& c : cases) {
    const auto d = rd::judge(c.current, c.candidate);
    EXPECT_EQ(d.change, c.change) << c.name << ": gain " << d.gain << ", spread " << d.spread;
  }
}
