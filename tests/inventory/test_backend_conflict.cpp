// Two backends registered with one id: the inventory keeps the first site,
// and check_backends() turns the conflict into an error with a fix.
#include <gtest/gtest.h>

#include <roster/backend.hpp>

#include <string>

TEST(inventory_backend_conflict, duplicate_backend_id_is_a_conflict_error_with_a_fix) {
  auto ok = roster::check_backends();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::conflict);
  const std::string& m = ok.error().message();
  EXPECT_NE(m.find("backend_twin_a.cpp:"), std::string::npos) << m;
  EXPECT_NE(m.find("backend_twin_b.cpp:"), std::string::npos) << m;
  EXPECT_FALSE(ok.error().fix().empty()) << m;
  EXPECT_EQ(roster::inventory<roster::backend_registration>().size(), 1u);
}
