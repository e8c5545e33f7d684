// Regressions found by the fuzz targets and the fault injection, one test
// each, so they fail in the plain build too (the fuzz inputs themselves are
// replayed by fuzz_replay_<target>, where the sanitizers see them).
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

// fuzz/regressions/tuning/reps-beyond-uint32.json: "reps": 4294967296 was
// cast to the 32-bit field, which is undefined behaviour (UBSan's
// float-cast-overflow); it is now a corrupt file like any other bad count.
TEST(regressions, tuning_count_beyond_its_field_is_a_corrupt_file) {
  const std::string head = R"({"format": "roster-tuning", "version": 1, "records": [{"backend": "x", "device": "y", "driver": "", )";
  auto fits = roster::parse_tuning(head + R"("reps": 4294967295, "elements": 1e18, "gbps": {}}]})");
  ASSERT_TRUE(fits.has_value()) << fits.error().message();
  EXPECT_EQ(fits->records.at(0).reps, 4294967295u);
  auto beyond = roster::parse_tuning(head + R"("reps": 4294967296, "gbps": {}}]})");
  ASSERT_FALSE(beyond.has_value());
  EXPECT_EQ(beyond.error().code(), roster::errc::io);
  EXPECT_NE(beyond.error().message().find("\"reps\""), std::string::npos) << beyond.error().message();
  EXPECT_FALSE(beyond.error().fix().empty());
}

// An enumerator that reports a device type outside the enum made the trace
// read past the end of the names table (ASan: global-buffer-overflow).
TEST(regressions, unknown_device_type_has_a_name) {
  EXPECT_EQ(roster::to_string(static_cast<roster::device_type>(250)), "unknown");
  EXPECT_EQ(roster::to_string(static_cast<roster::device_type>(5)), "unknown");
  EXPECT_EQ(roster::to_string(roster::device_type::cpu), "cpu");
}

// A local rank of more than 18 digits overflowed a 64-bit integer while being
// read (UBSan: signed-integer-overflow) before it was rejected.
TEST(regressions, a_local_rank_of_many_digits_is_an_error) {
  ASSERT_EQ(setenv("OMPI_COMM_WORLD_LOCAL_RANK", "9999999999999999999999999999", 1), 0);
  auto r = roster::local_rank();
  ASSERT_EQ(unsetenv("OMPI_COMM_WORLD_LOCAL_RANK"), 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), roster::errc::invalid_argument);
  EXPECT_FALSE(r.error().fix().empty());
}

}  // namespace
