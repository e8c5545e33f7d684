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

// Case 34 (docs/hostile.md): "cuda: cuda: no usable driver", "cuda:0: cuda:0:
// allocate ...". Each layer adds its context once: a context the text already
// leads with, or a spec whose backend id leads it, is not added twice.
TEST(Error, PrependAddsEachContextOnce) {
  const auto with = [](const char* what, const char* context) {
    roster::error e(roster::errc::unavailable, what, "fix");
    return std::string(e.prepend(context).what());
  };
  EXPECT_EQ(with("cuda: no usable driver", "cuda"), "cuda: no usable driver");
  EXPECT_EQ(with("cuda: no usable driver", "cuda:0"), "cuda:0: no usable driver");
  EXPECT_EQ(with("cuda:0: allocate: too much", "cuda:0"), "cuda:0: allocate: too much");
  EXPECT_EQ(with("cuda:0: bad kernel", "cuda:0: dispatch"), "cuda:0: dispatch: bad kernel");
  EXPECT_EQ(with("cudax: text", "cuda:0"), "cuda:0: cudax: text");
  EXPECT_EQ(with("cuda:1: text", "cuda:0"), "cuda:0: cuda:1: text");
  EXPECT_EQ(with("cuda: text", "cuda:x"), "cuda:x: cuda: text");  // not a spec: added whole
  EXPECT_EQ(with("/a/tuning.json: corrupt", "/a/tuning.json"), "/a/tuning.json: corrupt");
  EXPECT_EQ(with("cuda", "cuda"), "cuda: cuda");  // no ": " after it: not a context
}

TEST(Error, ExpectedCarriesTheParts) {
  roster::expected<int> r = roster::make_error(roster::errc::not_found, "no such thing", "look elsewhere");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what(), "no such thing");
  EXPECT_EQ(r.error().fix(), "look elsewhere");
}

}  // namespace
