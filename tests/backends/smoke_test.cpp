// The CPU backend registers, opens and runs a program.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <vector>

TEST(cpu_backend, registers_opens_and_runs_triad) {
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d) << d.error().message();
  auto a = (*d)->allocate<double>(5000), b = (*d)->allocate<double>(5000), c = (*d)->allocate<double>(5000);
  ASSERT_TRUE(a && b && c);
  roster::program p;
  p.fill(*b, 2.0).fill(*c, 3.0).triad(*a, *b, *c, 0.5);
  auto ok = (*d)->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<double> out(5000);
  ASSERT_TRUE((*d)->download(*a, std::span<double>(out)));
  for (double x : out) ASSERT_EQ(x, 3.5);
}
