// Header-only mode is ODR-clean: two units that include roster with
// ROSTER_HEADER_ONLY, one at -O0 -fno-inline and one at -O2, linked into one
// program, see one inventory, one circuit list, one device cache and one scan
// generation, and compute the same results. State in an unnamed namespace or
// a static function would give each unit a copy of its own, and this fails.
#include "odr_probe.hpp"

#include <gtest/gtest.h>

TEST(odr, two_units_built_differently_share_one_roster) {
  const odr_test::view a = odr_test::probe_o0();
  const odr_test::view b = odr_test::probe_o2();
  ASSERT_NE(a.device, nullptr) << "get_device(\"cpu\") failed in the -O0 unit";
  EXPECT_EQ(a.backends, b.backends) << "two inventories";
  EXPECT_EQ(a.circuits, b.circuits) << "two circuit lists";
  EXPECT_EQ(a.device, b.device) << "two device caches";
  EXPECT_EQ(a.primary, b.primary) << "two primary devices";
  EXPECT_EQ(a.generation, b.generation) << "two scan generations";
  EXPECT_DOUBLE_EQ(a.triad, 2.0 + 0.5 * 3.0);
  EXPECT_DOUBLE_EQ(b.triad, a.triad);
  EXPECT_FALSE(a.bad_spec.empty());
  EXPECT_EQ(a.bad_spec, b.bad_spec);
}
