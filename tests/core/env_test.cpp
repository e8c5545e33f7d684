// The one parser for roster's environment variables: booleans, whole numbers
// and choices, each malformed value an error that quotes it and ends with a Fix.
#include <roster/env.hpp>

#include <gtest/gtest.h>

#include "../support/scoped_env.hpp"

#include <cstdlib>

namespace {

using roster_test::scoped_env;

TEST(Env, BooleanWordsAreTheSameEverywhere) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "On", " on "}) EXPECT_EQ(roster::env::parse_flag(yes), true) << yes;
  for (const char* no : {"0", "false", "No", "off", "OFF"}) EXPECT_EQ(roster::env::parse_flag(no), false) << no;
  for (const char* bad : {"", "2", "enable", "y", "of", "truee"}) EXPECT_EQ(roster::env::parse_flag(bad), std::nullopt) << bad;
}

TEST(Env, AFlagUnsetOrBlankIsNoValueAndAMalformedOneIsAnError) {
  ::unsetenv("ROSTER_TEST_FLAG");
  EXPECT_EQ(*roster::env::flag("ROSTER_TEST_FLAG"), std::nullopt);
  {
    scoped_env e("ROSTER_TEST_FLAG", "  ");
    EXPECT_EQ(*roster::env::flag("ROSTER_TEST_FLAG"), std::nullopt);
  }
  {
    scoped_env e("ROSTER_TEST_FLAG", "off");
    EXPECT_EQ(*roster::env::flag("ROSTER_TEST_FLAG"), false);
  }
  scoped_env e("ROSTER_TEST_FLAG", "banana");
  auto bad = roster::env::flag("ROSTER_TEST_FLAG");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(bad.error().message().find("ROSTER_TEST_FLAG='banana'"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("\nFix: "), std::string::npos);
}

TEST(Env, AWholeNumberIsCheckedForDigitsAndRange) {
  {
    scoped_env e("ROSTER_TEST_NUMBER", " 12 ");
    EXPECT_EQ(*roster::env::whole_number("ROSTER_TEST_NUMBER", 1, 100), 12u);
  }
  for (const char* bad : {"0", "101", "-3", "1e3", "12abc", "99999999999999999999999"}) {
    scoped_env e("ROSTER_TEST_NUMBER", bad);
    auto n = roster::env::whole_number("ROSTER_TEST_NUMBER", 1, 100);
    ASSERT_FALSE(n) << bad;
    EXPECT_NE(n.error().message().find("a whole number from 1 to 100"), std::string::npos) << n.error().message();
  }
}

TEST(Env, AChoiceNamesTheChoicesWhenItMatchesNone) {
  {
    scoped_env e("ROSTER_TEST_CHOICE", "Split");
    EXPECT_EQ(*roster::env::choice("ROSTER_TEST_CHOICE", {"native", "split", "auto"}), 1u);
  }
  scoped_env e("ROSTER_TEST_CHOICE", "fast");
  auto c = roster::env::choice("ROSTER_TEST_CHOICE", {"native", "split", "auto"});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("one of native, split or auto"), std::string::npos) << c.error().message();
}

}  // namespace
