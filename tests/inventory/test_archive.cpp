// A backend in a static archive: kept with link_whole or the anchor, dropped
// (and diagnosable) without either. ROSTER_TEST_ARCHIVE_EXPECT says which.
#include <gtest/gtest.h>

#include <roster/acquire.hpp>
#include <roster/backend.hpp>

#include <string>

#define ROSTER_TEST_PRESENT 1
#define ROSTER_TEST_DROPPED 2

#if defined(ROSTER_TEST_USE_ANCHOR)
ROSTER_USE_BACKEND(fake);
#endif

#if ROSTER_TEST_ARCHIVE_EXPECT == ROSTER_TEST_PRESENT

TEST(inventory_archive, member_is_kept_and_its_backend_found) {
  const auto* b = roster::find_backend("fake");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->id, "fake");
  bool listed = false;
  for (const auto& e : roster::registered_backends())
    if (e.id() == "fake") listed = (e.rank == 50);
  EXPECT_TRUE(listed);
  // acquire reaches the backend's own factory, whose error is the test double's.
  auto d = roster::acquire("fake:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::unavailable);
  EXPECT_NE(d.error().message().find("test backend has no device"), std::string::npos);
}

#else

TEST(inventory_archive, dropped_member_is_missing_from_the_inventory) {
  EXPECT_EQ(roster::find_backend("fake"), nullptr);
  for (const auto& e : roster::registered_backends()) EXPECT_NE(e.id(), "fake");
}

TEST(inventory_archive, acquire_names_the_missing_backend_and_the_fix) {
  auto d = roster::acquire("fake:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::not_found);
  const std::string& m = d.error().message();
  EXPECT_NE(m.find("unknown type 'fake'"), std::string::npos) << m;
  std::string fix(d.error().fix());
  EXPECT_NE(fix.find("link_whole"), std::string::npos) << m;
  EXPECT_NE(fix.find("ROSTER_USE_BACKEND"), std::string::npos) << m;
}

#endif
