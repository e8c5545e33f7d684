// roster::error holds its code, what and fix apart; message() joins them.
#include <roster/error.hpp>

#include <gtest/gtest.h>

namespace {

TEST(Error, PartsAreHeldApartAndJoinedByMessage) {
  const roster::error e(roster::errc::io, "the file is gone", "write it again");
  EXPECT_EQ(e.code(), roster::errc::io);
  EXPECT_EQ(e.what(), "the file is gone");
  EXPECT_EQ(e.fix(), "write it again");
  EXPECT_EQ(e.message(), "the file is gone\nFix: write it again");
}

TEST(Error, NoPartIsFoundAgainInTheJoinedText) {
  // A fix that itself quotes "\nFix: " (or a what that does) stays whole.
  const roster::error e(roster::errc::internal, "backend said: x\nFix: y", "a\nFix: b");
  EXPECT_EQ(e.what(), "backend said: x\nFix: y");
  EXPECT_EQ(e.fix(), "a\nFix: b");
}

TEST(Error, PrependAddsContextToWhatAndKeepsTheFix) {
  roster::error e(roster::errc::invalid_argument, "bad term", "write a good one");
  e.prepend("ROSTER_DEVICE_SELECTOR").prepend("circuits");
  EXPECT_EQ(e.what(), "circuits: ROSTER_DEVICE_SELECTOR: bad term");
  EXPECT_EQ(e.fix(), "write a good one");
  EXPECT_EQ(e.message(), "circuits: ROSTER_DEVICE_SELECTOR: bad term\nFix: write a good one");
}

TEST(Error, ExpectedCarriesTheParts) {
  roster::expected<int> r = roster::make_error(roster::errc::not_found, "no such thing", "look elsewhere");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what(), "no such thing");
  EXPECT_EQ(r.error().fix(), "look elsewhere");
}

}  // namespace
