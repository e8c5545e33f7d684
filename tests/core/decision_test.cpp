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

TEST(Decision, RecordedTimings) {
  const auto cases = load_cases();
  ASSERT_EQ(cases.size(), 6u) << "read " << ROSTER_DECISION_CASES;
  for (const auto& c : cases) {
    const auto d = rd::judge(c.current, c.candidate);
    EXPECT_EQ(d.change, c.change) << c.name << ": gain " << d.gain << ", spread " << d.spread;
  }
}
