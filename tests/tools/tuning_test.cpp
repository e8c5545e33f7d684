// Tuning records: round trip, stale, corrupt and partial files, concurrent
// writers, and the ranking change a record causes.

#include "fake_backend.hpp"
#include "helpers.hpp"

#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/decide.hpp>
#include <roster/tuning.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace tools_test;

roster::tuning_record record_for(const roster::adapter_info& a, double triad, std::string driver = "") {
  roster::tuning_record r;
  r.backend = a.backend;
  r.device = roster::tuning_device_key(a);
  r.driver_version = driver.empty() ? a.driver_version : driver;
  r.spec = a.spec();
  r.name = a.name;
  r.measured_at = "2026-11-29T19:00:00Z";
  r.elements = 1u << 20;
  r.reps = 5;
  r.figures = {{roster::op::copy, roster::element_type::f32, 10.5},
               {roster::op::triad, roster::element_type::f64, triad},
               {roster::op::dot, roster::element_type::f64, 0.125}};
  return r;
}

// Points the default tuning file at a fresh folder for one test.
struct tuning_home {
  temp_dir dir;
  std::string path;
  tuning_home() {
    ::setenv("XDG_CACHE_HOME", dir.path.c_str(), 1);
    path = dir.path + "/roster/tuning.json";
    roster::reload_tuning();
    roster::rescan();
  }
  ~tuning_home() {
    ::unsetenv("XDG_CACHE_HOME");
    roster::reload_tuning();
    roster::rescan();
  }
};

TEST(Tuning, PathFollowsXdgCacheHomeThenHome) {
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(*roster::tuning_path(), "/x/cache/roster/tuning.json");
  ::setenv("XDG_CACHE_HOME", "", 1);
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(*roster::tuning_path(), "/home/u/.cache/roster/tuning.json");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(*roster::tuning_path(), "/home/u/.cache/roster/tuning.json");
}

TEST(Tuning, SplitWinsOnlyBeyondSpreadAndMinimum) {
  auto r = record_for(fake_adapter(0), 1.0);
  r.sync_shapes.push_back({"triad|dot", 1000.0, 980.0, 0.0});  // 2% faster: below the 3% minimum
  EXPECT_EQ(r.split_faster_for("triad|dot"), false);
  r.sync_shapes[0].split_ns = 900.0;  // 10% faster
  EXPECT_EQ(r.split_faster_for("triad|dot"), true);
  r.sync_shapes[0].spread = 0.15;  // ...but the reps wandered by 15%
  EXPECT_EQ(r.split_faster_for("triad|dot"), false);
  r.sync_shapes[0].spread = 0.05;
  EXPECT_EQ(r.split_faster_for("triad|dot"), true);
  EXPECT_EQ(r.split_faster_for("copy|dot"), std::nullopt);  // not measured
  // The spread goes through the file.
  tuning_home home;
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{r}));
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->records.size(), 1u);
  EXPECT_EQ(loaded->records[0].sync_shapes.at(0).spread, 0.05);
  EXPECT_EQ(loaded->records[0], r);
}

TEST(Tuning, VersionOneFilesAreStillRead) {
  // Version 1 kept the bench's `triad; grid_sync; dot` timings in "grid_sync":
  // they are read as that shape, and a save writes version 2.
  const std::string v1 = R"({"format": "roster-tuning", "version": 1, "records": [
    {"backend": "toolfake", "device": "d", "driver": "1",
     "gbps": {"double": {"triad": 12.5}}, "grid_sync": {"native_ns": 100, "split_ns": 50, "spread": 0.01}}]})";
  auto parsed = roster::parse_tuning(v1);
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_EQ(parsed->records.size(), 1u);
  ASSERT_EQ(parsed->records[0].sync_shapes.size(), 1u);
  EXPECT_EQ(parsed->records[0].sync_shapes[0], (roster::sync_timing{"triad|dot", 100, 50, 0.01}));
  EXPECT_EQ(parsed->records[0].split_faster_for("triad|dot"), true);
  const std::string v2 = roster::to_json(*parsed);
  EXPECT_NE(v2.find("\"version\": 2"), std::string::npos) << v2;
  EXPECT_EQ(v2.find("\"grid_sync\""), std::string::npos) << v2;  // the shapes list holds it now
  auto again = roster::parse_tuning(v2);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->records[0], parsed->records[0]);
}

TEST(Tuning, RoundTripThroughFile) {
  tuning_home home;
  auto a = record_for(fake_adapter(0), 321.5);
  a.sync_shapes.push_back({"triad|dot", 1500.0, 1200.25, 0.0});
  a.name = "quote \" backslash \\ tab \t unicode \xc3\xa9";
  auto b = record_for(fake_adapter(1), 99.0);
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{a, b}));
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->records.size(), 2u);
  EXPECT_EQ(loaded->records[0], a);
  EXPECT_EQ(loaded->records[1], b);
  EXPECT_EQ(loaded->records[0].split_faster_for("triad|dot"), true);
  EXPECT_EQ(loaded->records[1].split_faster_for("triad|dot"), std::nullopt);
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(home.dir.path + "/roster")) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);  // tuning.json and tuning.json.lock
}

TEST(Tuning, SaveMergesByBackendAndDevice) {
  tuning_home home;
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(0), 1.0)}));
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(1), 2.0)}));
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(0), 3.0, "581.0")}));
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->records.size(), 2u);
  EXPECT_EQ(loaded->records[0].driver_version, "581.0");
  EXPECT_EQ(loaded->records[0].triad_bandwidth(), 3.0);
  EXPECT_EQ(loaded->records[1].triad_bandwidth(), 2.0);
}

TEST(Tuning, MissingFileIsEmpty) {
  tuning_home home;
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->records.empty());
}

TEST(Tuning, StaleRecordIsIgnored) {
  tuning_home home;
  auto adapter = fake_adapter(0);
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(adapter, 500.0, "570.0")}));
  roster::reload_tuning();
  auto m = roster::find_tuning(roster::current_tuning(), adapter);
  EXPECT_EQ(m.record, nullptr);
  ASSERT_NE(m.stale, nullptr);
  EXPECT_EQ(m.stale->driver_version, "570.0");
  EXPECT_EQ(roster::triad_bandwidth(adapter), std::nullopt);
  // The same record under the current driver counts.
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(adapter, 500.0)}));
  roster::reload_tuning();
  EXPECT_EQ(roster::triad_bandwidth(adapter), 500.0);
}

TEST(Tuning, StaleRecordDoesNotRank) {
  std::vector<roster::adapter_info> list{fake_adapter(0), fake_adapter(1)};
  std::vector<roster::tuning_record> recs{record_for(list[1], 900.0, "old-driver")};
  EXPECT_FALSE(roster::order_by_tuning(list, recs));
  EXPECT_EQ(list[0].ordinal, 0u);
}

void expect_corrupt_reported(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_text(path, text);
  auto loaded = roster::load_tuning(path);
  ASSERT_FALSE(loaded) << "accepted: " << text;
  EXPECT_EQ(loaded.error().code(), roster::errc::io);
  EXPECT_NE(loaded.error().message().find(path), std::string::npos);
  EXPECT_FALSE(loaded.error().fix().empty());
  EXPECT_NE(loaded.error().message().find("\nFix: "), std::string::npos);
  // The process-wide view ignores it: no records, no crash.
  roster::reload_tuning();
  EXPECT_TRUE(roster::current_tuning().empty());
  EXPECT_EQ(roster::triad_bandwidth(fake_adapter(0)), std::nullopt);
  EXPECT_TRUE(roster::split_shapes_for(fake_adapter(0)).empty());
}

TEST(Tuning, CorruptFilesAreReportedAndIgnored) {
  tuning_home home;
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(0), 1.0)}));
  for (const char* text : {"", "garbage", "{", "[]", "{\"format\": \"roster-tuning\", \"version\": 0, \"records\": []}",
                           "{\"format\": \"other\", \"version\": 1, \"records\": []}",
                           "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": [1]}",
                           "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": [{\"backend\": \"x\"}]}",
                           "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": []} trailing",
                           "\x89PNG\r\n\x1a\n\x00\x01"})
    expect_corrupt_reported(home.path, text);
  // A newer version is not corrupt: it is a newer roster's file, read as
  // nothing (docs/hostile.md, case 47).
  write_text(home.path, "{\"format\": \"roster-tuning\", \"version\": 3, \"records\": []}");
  auto newer = roster::load_tuning(home.path);
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code(), roster::errc::unsupported);
  roster::reload_tuning();
  EXPECT_TRUE(roster::current_tuning().empty());
}

TEST(Tuning, PartialFilesAreReportedAndIgnored) {
  tuning_home home;
  auto a = record_for(fake_adapter(0), 1.0);
  a.sync_shapes.push_back({"triad|dot", 10.0, 5.0, 0.0});
  const std::string whole = roster::to_json({{a, record_for(fake_adapter(1), 2.0)}});
  ASSERT_TRUE(roster::parse_tuning(whole));
  // Every proper prefix that cuts into the text is rejected (a trailing
  // newline or space alone is still a whole file).
  std::string trimmed = whole;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
  for (std::size_t n = 0; n < trimmed.size(); ++n) {
    auto parsed = roster::parse_tuning(std::string_view(trimmed).substr(0, n));
    ASSERT_FALSE(parsed) << "accepted a file cut at byte " << n;
  }
  expect_corrupt_reported(home.path, trimmed.substr(0, trimmed.size() / 2));
}

TEST(Tuning, SaveReplacesACorruptFile) {
  tuning_home home;
  std::filesystem::create_directories(home.dir.path + "/roster");
  write_text(home.path, "{\"format\": \"roster-tun");
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(0), 7.0)}));
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->records.size(), 1u);
}

TEST(Tuning, UnwritableFolderIsAnErrorNotACrash) {
  auto ok = roster::save_tuning("/proc/roster-no/tuning.json", std::vector{record_for(fake_adapter(0), 1.0)});
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::io);
  EXPECT_FALSE(ok.error().fix().empty());
}

// Two writer processes, each saving its own record many times while a reader
// loads the file: every load sees a whole file, and both records survive.
TEST(Tuning, ConcurrentWritersNeverCorrupt) {
  tuning_home home;
  constexpr int rounds = 150;
  std::vector<pid_t> writers;
  for (std::uint32_t w = 0; w < 2; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int bad = 0;
      for (int i = 0; i < rounds; ++i) {
        auto r = record_for(fake_adapter(w), 100.0 * w + i);
        if (!roster::save_tuning(home.path, std::vector{r})) ++bad;
      }
      ::_exit(bad == 0 ? 0 : 1);
    }
    writers.push_back(pid);
  }
  int loads = 0, corrupt = 0;
  std::vector<int> status(writers.size(), -1);
  for (bool running = true; running;) {
    running = false;
    for (std::size_t w = 0; w < writers.size(); ++w) {
      if (status[w] != -1) continue;
      int st = 0;
      if (::waitpid(writers[w], &st, WNOHANG) == writers[w]) status[w] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
      else running = true;
    }
    auto loaded = roster::load_tuning(home.path);
    ++loads;
    if (!loaded) {
      ++corrupt;
      ADD_FAILURE() << loaded.error().message();
    }
  }
  EXPECT_EQ(status, (std::vector<int>{0, 0})) << "a writer's save failed";
  EXPECT_EQ(corrupt, 0) << "of " << loads << " loads";
  auto loaded = roster::load_tuning(home.path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->records.size(), 2u);
  for (const auto& r : loaded->records) {
    const double base = r.device == roster::tuning_device_key(fake_adapter(0)) ? 0.0 : 100.0;
    EXPECT_EQ(r.triad_bandwidth(), base + rounds - 1) << r.device;
  }
}

TEST(Ranking, RecordReordersAdaptersWithinATypeClass) {
  std::vector<roster::adapter_info> list{fake_adapter(0), fake_adapter(1)};
  auto cpu = fake_adapter(2);
  cpu.type = roster::device_type::cpu;
  list.insert(list.begin() + 1, cpu);  // toolfake:0, cpu-typed, toolfake:1
  std::vector<roster::tuning_record> recs{record_for(list[0], 100.0), record_for(list[2], 400.0),
                                          record_for(cpu, 9999.0)};
  EXPECT_TRUE(roster::order_by_tuning(list, recs));
  // The discrete pair swapped places; the cpu adapter kept its slot.
  EXPECT_EQ(list[0].ordinal, 1u);
  EXPECT_EQ(list[1].type, roster::device_type::cpu);
  EXPECT_EQ(list[2].ordinal, 0u);
  // Without records nothing moves.
  std::vector<roster::adapter_info> plain{fake_adapter(0), fake_adapter(1)};
  EXPECT_FALSE(roster::order_by_tuning(plain, std::span<const roster::tuning_record>{}));
  EXPECT_EQ(plain[0].ordinal, 0u);
}

std::vector<std::string> toolfake_circuit_order() {
  std::vector<std::string> out;
  auto cs = roster::circuits();
  EXPECT_TRUE(cs) << cs.error().message();
  if (!cs) return out;
  for (const auto& c : *cs)
    if (c.adapter.backend == "toolfake") out.push_back(c.adapter.spec());
  return out;
}

TEST(Ranking, RecordChangesCircuitOrderAndPrimary) {
  tuning_home home;  // records rank circuits by default: no call to opt in
  roster::rescan();
  EXPECT_EQ(toolfake_circuit_order(), (std::vector<std::string>{"toolfake:0", "toolfake:1"}));
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(0), 100.0),
                                                         record_for(fake_adapter(1), 400.0)}));
  roster::reload_tuning();
  roster::rescan();
  EXPECT_EQ(toolfake_circuit_order(), (std::vector<std::string>{"toolfake:1", "toolfake:0"}));
  const roster::circuit* p = roster::primary();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->adapter.spec(), "toolfake:1");
  EXPECT_EQ(p->score, 400.0);
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{record_for(fake_adapter(1), 400.0, "old")}));
  roster::reload_tuning();
  roster::rescan();
  // A stale record stops counting: the measured toolfake:0 leads again.
  EXPECT_EQ(toolfake_circuit_order(), (std::vector<std::string>{"toolfake:0", "toolfake:1"}));
}

TEST(Ranking, RecordChoosesSplitGridSyncForAcquire) {
  tuning_home home;
  auto native = roster::acquire("toolfake:0");
  ASSERT_TRUE(native);
  EXPECT_TRUE((*native)->caps().native_grid_sync);
  auto rec = record_for(fake_adapter(0), 1.0);
  rec.sync_shapes.push_back({"triad|dot", 2000.0, 1000.0, 0.0});
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{rec}));
  roster::reload_tuning();
  EXPECT_EQ(roster::split_shapes_for(fake_adapter(0)), (std::vector<std::string>{"triad|dot"}));
  // acquire reads no file: the records come through its options.
  auto unread = roster::acquire("toolfake:0");
  ASSERT_TRUE(unread);
  EXPECT_EQ(dynamic_cast<roster::grid_sync_split<roster::device>*>(unread->get()), nullptr);
  auto split = roster::acquire("toolfake:0", {.tuning = roster::current_tuning()});
  ASSERT_TRUE(split);
  // The split is per program shape: the measured `triad; grid_sync; dot` is
  // cut, another program runs native.
  auto* cut = dynamic_cast<roster::grid_sync_split<roster::device>*>(split->get());
  ASSERT_NE(cut, nullptr);
  EXPECT_TRUE((*split)->caps().native_grid_sync);
  auto a = (*split)->allocate<double>(8), b = (*split)->allocate<double>(8), r = (*split)->allocate<double>(1);
  ASSERT_TRUE(a && b && r);
  roster::program measured, other;
  measured.triad(*a, *b, *a, 2.0).grid_sync().dot(*r, *a, *b);
  other.copy(*a, *b).grid_sync().dot(*r, *a, *b);
  EXPECT_TRUE(cut->cuts(measured.steps()));
  EXPECT_FALSE(cut->cuts(other.steps()));
  // A record that found native faster keeps native.
  rec.sync_shapes[0].split_ns = 3000.0;
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{rec}));
  roster::reload_tuning();
  EXPECT_TRUE(roster::split_shapes_for(fake_adapter(0)).empty());
  auto again = roster::acquire("toolfake:0", {.tuning = roster::current_tuning()});
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)->caps().native_grid_sync);
  EXPECT_EQ(dynamic_cast<roster::grid_sync_split<roster::device>*>(again->get()), nullptr);
  // So does a stale one.
  rec.sync_shapes[0].split_ns = 1000.0;
  rec.driver_version = "older";
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{rec}));
  roster::reload_tuning();
  EXPECT_TRUE(roster::split_shapes_for(fake_adapter(0)).empty());
}

TEST(Ranking, TraceSaysWhenARecordDecided) {
  tuning_home home;
  auto rec = record_for(fake_adapter(0), 1.0);
  rec.sync_shapes.push_back({"triad|dot", 2000.0, 1000.0, 0.0});
  ASSERT_TRUE(roster::save_tuning(home.path, std::vector{rec}));
  roster::reload_tuning();
  ::setenv("ROSTER_TRACE", "1", 1);
  testing::internal::CaptureStderr();
  (void)roster::split_shapes_for(fake_adapter(0));
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("ROSTER_TRACE");
  EXPECT_NE(err.find("toolfake:0: grid-sync split for programs of shape 'triad|dot', by record"), std::string::npos)
      << err;
  testing::internal::CaptureStderr();
  (void)roster::split_shapes_for(fake_adapter(0));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // silent without ROSTER_TRACE
}

}  // namespace
