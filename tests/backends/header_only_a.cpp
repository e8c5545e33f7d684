// Header-only use of the CPU backend from two translation units: each
// includes the header, and the registry still holds one "cpu" entry.
#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

int header_only_b_open_and_fill();

TEST(cpu_header_only, two_translation_units_register_one_backend) {
  std::size_t cpu = 0;
  for (const auto* r : roster::inventory<roster::backend_registration>()) cpu += r->id == "cpu" ? 1 : 0;
  EXPECT_EQ(cpu, 1u);
  EXPECT_EQ(roster::inventory_info<roster::backend_registration>().conflicts, 0u);
  EXPECT_EQ(header_only_b_open_and_fill(), 1);
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d) << d.error().message();
}
