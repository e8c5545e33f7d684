// roster-info bench --shape: each grid-sync program shape timed, checked and
// recorded under its own name; acquire cuts the shapes the split won; a bad
// shape is a usage error with a Fix.

// GCC 12 warns -Wmaybe-uninitialized inside libstdc++'s std::function as
// <regex> instantiates it under ASan's instrumentation (see info_test.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "helpers.hpp"
#include "info.hpp"

#include <gtest/gtest.h>

#include <roster/acquire.hpp>
#include <roster/tuning.hpp>

#include <filesystem>
#include <map>

namespace {

using namespace tools_test;
using nlohmann::json;

// roster-info built with the test backends (toolfake: two adapters, 0 with native grid sync).
const std::string fake_info = ROSTER_INFO_FAKE;

// Two shapes, each timed native and split, checked and recorded under its own
// name. The fake backend makes the answer known: every dispatch takes 300 us,
// and copy|dot in one launch 8 ms more, so the split (two 300 us pieces)
// wins copy|dot and loses triad|dot, far beyond any spread of 9 reps (their
// interquartile range ignores two slow runs on a loaded machine; with 5, one
// CI run under ASan on the 2-core box left copy|dot unrecorded).
TEST(Bench, EachShapeIsTimedAndRecordedAndAcquireCutsOnlyItsWinner) {
  temp_dir cache;
  const std::map<std::string, std::optional<std::string>> timing = {{"TOOLFAKE_DISPATCH_US", "300"},
                                                                    {"TOOLFAKE_SLOW_NATIVE", "copy|dot"}};
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--adapter", "toolfake:1", "--size", "1K", "--reps",
                            "9", "--no-kernels", "--shape", "copy|dot", "--shape", "triad|dot", "--shape", "copy|dot"},
                cache.path, timing);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(find_line(r.out, "toolfake:0 grid sync copy|dot: native "), std::string::npos) << r.out;
  EXPECT_NE(find_line(r.out, "toolfake:0 grid sync triad|dot: native "), std::string::npos) << r.out;
  EXPECT_NE(find_line(r.out, "toolfake:1 grid sync copy|dot: no native grid sync"), std::string::npos) << r.out;
  EXPECT_NE(find_line(r.out, "Grid sync per program shape, '|' a grid_sync (median;"), std::string::npos) << r.out;
  EXPECT_TRUE(has_row(r.out, "toolfake:0 +copy\\|dot +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +split")) << r.out;
  EXPECT_TRUE(has_row(r.out, "toolfake:0 +triad\\|dot +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +native")) << r.out;
  // A shape named twice is timed once.
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = r.out.find("toolfake:0 grid sync copy|dot:", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << r.out;

  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 2u);
  const auto& rec = file->records[0];
  ASSERT_EQ(rec.sync_shapes.size(), 2u);
  EXPECT_EQ(rec.sync_shapes[0].shape, "copy|dot");
  EXPECT_EQ(rec.sync_shapes[1].shape, "triad|dot");
  EXPECT_EQ(rec.split_faster_for("copy|dot"), true);
  EXPECT_EQ(rec.split_faster_for("triad|dot"), false);
  EXPECT_TRUE(file->records[1].sync_shapes.empty());  // toolfake:1 has no native grid sync

  // The JSON report lists the shapes, as its schema says.
  auto report = info(fake_info, {"--json"}, cache.path);
  ASSERT_EQ(report.status, 0) << report.err;
  json doc = json::parse(report.out);
  schema_validator v(json::parse(read_text(ROSTER_INFO_SCHEMA)));
  const auto errors = v.validate(doc);
  EXPECT_TRUE(errors.empty()) << errors.front();
  const json* fake0 = nullptr;
  for (const auto& a : doc["adapters"])
    if (a["spec"] == "toolfake:0") fake0 = &a;
  ASSERT_NE(fake0, nullptr);
  const json& shapes = (*fake0)["grid_sync_shapes"];
  ASSERT_EQ(shapes.size(), 2u) << shapes.dump();
  EXPECT_EQ(shapes[0]["shape"], "copy|dot");
  EXPECT_EQ(shapes[0]["split_faster"], true);
  EXPECT_EQ(shapes[1]["shape"], "triad|dot");
  EXPECT_EQ(shapes[1]["split_faster"], false);
  EXPECT_GT(shapes[0]["native_ns"].get<double>(), shapes[0]["split_ns"].get<double>());

  // acquire, given that file's records, cuts programs of the shape the split
  // won and runs the other in one launch.
  ::setenv("XDG_CACHE_HOME", cache.path.c_str(), 1);
  roster::reload_tuning();
  auto d = roster::acquire("toolfake:0", {.tuning = roster::current_tuning()});
  ::unsetenv("XDG_CACHE_HOME");
  roster::reload_tuning();
  ASSERT_TRUE(d) << d.error().message();
  auto* cut = dynamic_cast<roster::grid_sync_split<roster::device>*>(d->get());
  ASSERT_NE(cut, nullptr);
  auto a = (*d)->allocate<double>(8), b = (*d)->allocate<double>(8), c = (*d)->allocate<double>(8),
       s = (*d)->allocate<double>(1);
  ASSERT_TRUE(a && b && c && s);
  roster::program copy_dot, triad_dot;
  copy_dot.copy(*c, *a).grid_sync().dot(*s, *a, *b);
  triad_dot.triad(*a, *b, *c, 0.4).grid_sync().dot(*s, *a, *b);
  EXPECT_TRUE(cut->cuts(copy_dot.steps()));
  EXPECT_FALSE(cut->cuts(triad_dot.steps()));
}

TEST(Bench, WithoutShapesTheBenchTimesTriadDot) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--no-kernels"},
                cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(find_line(r.out, "toolfake:0 grid sync triad|dot: native "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("grid sync copy"), std::string::npos) << r.out;
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 1u);
  ASSERT_EQ(file->records[0].sync_shapes.size(), 1u);
  EXPECT_EQ(file->records[0].sync_shapes[0].shape, "triad|dot");
}

// Each shape's program is checked, native and split, before its timings
// count: a wrong one in one launch is an error with a Fix, that shape is not
// recorded (the adapter's figures and its right shapes are), and the status is 5.
TEST(Bench, AShapeWithAWrongResultIsNotRecorded) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--no-kernels",
                            "--shape", "copy|dot", "--shape", "dot|triad"},
                cache.path, {{"TOOLFAKE_WRONG_IN_ONE_LAUNCH", "1"}});
  EXPECT_EQ(r.status, roster::info::wrong_result) << r.out << r.err;
  EXPECT_NE(find_line(r.out, "toolfake:0 grid sync copy|dot: wrong result"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("toolfake:0: toolfake:0 double grid sync copy|dot (native): wrong result: element 0 of 1 (r) "
                       "is 2049, the reference is 2048; this shape's timings are not recorded\n"
                       "Fix: the backend runs this program wrong in one launch"),
            std::string::npos)
      << r.err;
  // dot|triad ends with triad: a is off by one at element 0.
  EXPECT_NE(r.err.find("grid sync dot|triad (native): wrong result: element 0 of 1024 (a)"), std::string::npos)
      << r.err;
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 1u);
  EXPECT_EQ(file->records[0].figures.size(), 10u);
  EXPECT_TRUE(file->records[0].sync_shapes.empty());
}

TEST(Exit, ABadShapeIsAUsageErrorWithAFix) {
  temp_dir cache;
  const std::pair<const char*, const char*> cases[] = {
      {"copy|foo", "unknown op 'foo' (the bench's ops: copy, mul, add, triad, dot)"},
      {"copy,dot", "it has no '|' (grid_sync)"},
      {"triad||dot", "an op is missing before or after a ',' or '|'"},
      {"|dot", "an op is missing"},
      {"dot|", "an op is missing"},
      {"", "an op is missing"},
      {"fill|dot", "unknown op 'fill'"}};
  for (const auto& [shape, why] : cases) {
    auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--shape", shape},
                  cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << shape;
    EXPECT_NE(r.err.find(std::string("roster-info bench: --shape ") + shape + ": '" + shape +
                         "' is not a grid-sync program shape: " + why),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("\nFix: write the bench's ops (copy, mul, add, triad, dot) joined by ','"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("GB/s"), std::string::npos) << "nothing is timed after a usage error";
  }
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json"));
}

}  // namespace
