// The shared private helpers: text, environment, JSON and files.
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/file_io.hpp>
#include <roster/detail/base/json.hpp>
#include <roster/detail/testing/testing.hpp>
#include <roster/detail/base/text.hpp>
#include <roster/backend.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

using namespace roster::detail;

TEST(Text, TrimDropsEveryAsciiSpaceAndNothingElse) {
  EXPECT_EQ(trim(" \t\n\r\f\vcuda:1\v\f\r\n\t "), "cuda:1");
  EXPECT_EQ(trim("\xa0x"), "\xa0x");  // not ASCII: kept
  EXPECT_EQ(trim("   "), "");
}

TEST(Text, CaseFoldingIsAsciiOnly) {
  EXPECT_EQ(lower("CUDA-Vulkan_9"), "cuda-vulkan_9");
  EXPECT_TRUE(iequal("VuLkAn", "vulkan"));
  EXPECT_FALSE(iequal("vulkan", "vulkan1"));
  EXPECT_FALSE(iequal("\xc4", "\xe4"));  // Latin-1 letters are not folded
}

TEST(Text, ParseUintTakesDigitsUpToItsMaximum) {
  EXPECT_EQ(parse_uint("0", 10), 0u);
  EXPECT_EQ(parse_uint("2147483647", 0x7fffffff), 0x7fffffffu);
  EXPECT_FALSE(parse_uint("2147483648", 0x7fffffff));
  EXPECT_EQ(parse_uint("18446744073709551615", ~0ull), ~0ull);
  EXPECT_FALSE(parse_uint("18446744073709551616", ~0ull));  // would overflow
  EXPECT_FALSE(parse_uint("", 10));
  EXPECT_FALSE(parse_uint("-1", 10));
  EXPECT_FALSE(parse_uint(" 1", 10));
  EXPECT_FALSE(parse_uint("1x", 10));
}

TEST(Env, OneFlagParser) {
  EXPECT_EQ(flag_word(""), std::nullopt);
  EXPECT_EQ(flag_word("0"), false);
  EXPECT_EQ(flag_word("1"), true);
  EXPECT_EQ(flag_word(" Yes "), true);
  EXPECT_EQ(flag_word("off"), false);
  EXPECT_EQ(flag_word("2"), std::nullopt);
  ::setenv("ROSTER_TEST_FLAG", "0", 1);
  EXPECT_FALSE(env_flag("ROSTER_TEST_FLAG"));
  // Case 32 (docs/hostile.md): any set value but "0" was on, "false" and "off" included.
  for (const char* off : {"false", "off", "no", "FALSE", "2", "maybe"}) {
    ::setenv("ROSTER_TEST_FLAG", off, 1);
    EXPECT_FALSE(env_flag("ROSTER_TEST_FLAG")) << off;
  }
  ::setenv("ROSTER_TEST_FLAG", "maybe", 1);
  EXPECT_EQ(env_flag_state("ROSTER_TEST_FLAG"), flag_state::malformed);
  ::setenv("ROSTER_TEST_FLAG", "On", 1);
  EXPECT_TRUE(env_flag("ROSTER_TEST_FLAG"));
  ::unsetenv("ROSTER_TEST_FLAG");
  EXPECT_FALSE(env_text("ROSTER_TEST_FLAG"));
  ::setenv("ROSTER_TEST_FLAG", "  ", 1);
  EXPECT_TRUE(env_text("ROSTER_TEST_FLAG"));
  EXPECT_FALSE(env_nonblank("ROSTER_TEST_FLAG"));
  ::unsetenv("ROSTER_TEST_FLAG");
}

TEST(Env, TraceLinesHaveOnePrefix) {
  ::setenv("ROSTER_TRACE", "1", 1);
  testing::internal::CaptureStderr();
  trace("tuning: a line");
  trace("kept cpu:0");
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("ROSTER_TRACE");
  EXPECT_EQ(err, "roster: tuning: a line\nroster: kept cpu:0\n");
  testing::internal::CaptureStderr();
  trace("silent");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// Case 32: ROSTER_TRACE=off traced. Now every no word is off, and a word
// that is no boolean leaves tracing off and is said once, with a Fix.
TEST(Env, TraceOffDoesNotTraceAndAMalformedValueIsSaidOnce) {
  for (const char* off : {"off", "0", "false", "no", "OFF"}) {
    ::setenv("ROSTER_TRACE", off, 1);
    testing::internal::CaptureStderr();
    trace("silent");
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << off;
  }
  ::setenv("ROSTER_TRACE", "verbose", 1);
  testing::internal::CaptureStderr();
  trace("one");
  trace("two");
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("ROSTER_TRACE");
  EXPECT_EQ(err, "roster: ROSTER_TRACE='verbose' is not one of 1, true, yes, on or 0, false, no, off, so tracing "
                 "is off\nFix: set ROSTER_TRACE to one of 1, true, yes, on or 0, false, no, off, or unset it\n");
}

// The pull reader builds what it is asked for and skips the rest; past its
// budget it skips too, and says so.
TEST(Json, StreamingReaderSkipsWhatItIsNotAskedFor) {
  json_reader in(R"( {"skip": [1, {"a": [true, null, "x\u00e9"]}], "keep": {"n": 2}, "big": [1,2,3,4,5,6,7,8,9]} )");
  ASSERT_TRUE(in.enter_object());
  bool first = true;
  std::string key;
  json_value keep, big;
  while (in.next_member(first, key)) {
    if (key == "keep") {
      ASSERT_TRUE(in.value(keep, 1));
    } else if (key == "big") {
      in.limit(3 * sizeof(json_value));
      ASSERT_TRUE(in.value(big, 1));
      EXPECT_TRUE(in.over_budget());
    } else {
      ASSERT_TRUE(in.skip_value(1));
    }
  }
  ASSERT_FALSE(in.failed()) << in.why();
  EXPECT_TRUE(in.finish());
  ASSERT_NE(keep.get("n"), nullptr);
  EXPECT_EQ(keep.get("n")->n, 2);
  EXPECT_LT(big.items.size(), 3u);  // what fit, and nothing after
  json_reader bad(R"({"a": [1, 2,]})");
  ASSERT_TRUE(bad.enter_object());
  first = true;
  ASSERT_TRUE(bad.next_member(first, key));
  EXPECT_FALSE(bad.skip_value(1));
  EXPECT_EQ(bad.why(), "expected a value");
}

// json_bytes::kept writes a byte that is not UTF-8 as \udcNN, which the
// reader turns back into the byte; json_bytes::shown keeps the \xNN text.
TEST(Json, BytesThatAreNotUtf8AreKeptOrShown) {
  std::string kept, shown;
  json_quote(kept, "a\xff\xc3\xa9", json_bytes::kept);
  json_quote(shown, "a\xff\xc3\xa9");
  EXPECT_EQ(kept, "\"a\\udcff\xc3\xa9\"");
  EXPECT_EQ(shown, "\"a\\\\xff\xc3\xa9\"");
  json_value v;
  json_reader r(kept);
  ASSERT_TRUE(r.parse(v)) << r.why();
  EXPECT_EQ(v.s, "a\xff\xc3\xa9");
}

TEST(Json, ReaderAndWriterRoundTrip) {
  std::string text = "{\"k\": ";
  json_quote(text, "a\"b\\c\n\x01");
  text += ", \"n\": ";
  json_number(text, 0.1);
  text += "}";
  json_value v;
  json_reader r(text);
  ASSERT_TRUE(r.parse(v)) << r.why();
  ASSERT_NE(v.get("k"), nullptr);
  EXPECT_EQ(v.get("k")->s, "a\"b\\c\n\x01");
  EXPECT_EQ(v.get("n")->n, 0.1);
  json_reader trailing("{} x");
  EXPECT_FALSE(trailing.parse(v));
}

class Files : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("roster_detail_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(Files, ReadFileIsBoundedAndTellsMissingFromEmpty) {
  const std::string path = (dir_ / "f.txt").string();
  auto missing = read_file(path, "test file");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(locked_replace(path, "test file", [] { return std::string(100, 'x'); }));
  auto whole = read_file(path, "test file");
  ASSERT_TRUE(whole && whole->has_value());
  EXPECT_EQ(**whole, std::string(100, 'x'));
  auto bounded = read_file(path, "test file", 99);
  ASSERT_FALSE(bounded);
  EXPECT_EQ(bounded.error().code(), roster::errc::io);
  EXPECT_NE(bounded.error().message().find("test file " + path), std::string::npos);
  EXPECT_FALSE(bounded.error().fix().empty());
}

TEST_F(Files, LockedReplaceCreatesFoldersAndReplacesWhole) {
  const std::string path = (dir_ / "a" / "b" / "f.json").string();
  ASSERT_TRUE(locked_replace(path, "test file", [] { return std::string("one"); }));
  ASSERT_TRUE(locked_replace(path, "test file", [&] {
    auto old = read_file(path, "test file");  // under the lock: merge with the old text
    return old && old->has_value() ? **old + "+two" : std::string("lost");
  }));
  EXPECT_EQ(**read_file(path, "test file"), "one+two");
  std::size_t temps = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "a" / "b"))
    temps += e.path().filename().string().find(".XXXXXX") == std::string::npos &&
             e.path().filename().string().starts_with("f.json.") && e.path().extension() != ".lock";
  EXPECT_EQ(temps, 0u) << "a temporary file was left behind";
}

TEST(Testing, InvalidateInventoriesMakesTheNextCallCollectAgain) {
  (void)roster::inventory<roster::backend_registration>();
  const auto before = roster::inventory_collections();
  (void)roster::inventory<roster::backend_registration>();
  EXPECT_EQ(roster::inventory_collections(), before) << "a frozen inventory collects once";
  roster::testing::invalidate_inventories();
  (void)roster::inventory<roster::backend_registration>();
  EXPECT_GT(roster::inventory_collections(), before);
}

}  // namespace
