// roster-info: the table and JSON structure, the JSON against its schema,
// exit statuses, and the bench's output, records and chart.

// GCC 12 warns -Wmaybe-uninitialized inside libstdc++'s std::function as
// <regex> instantiates it under ASan's instrumentation: a known false positive
// of that compiler (GCC bug 105562), not this file's. Set before any include,
// since <functional> comes in with the first.
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "helpers.hpp"
#include "info.hpp"

#include <gtest/gtest.h>

#include <roster/tuning.hpp>

#include <algorithm>
#include <regex>
#include <chrono>
#include <thread>

#include <pty.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace tools_test;
using nlohmann::json;

// roster-info built with the test backends (toolfake: two adapters; toolbroken: never opens).
const std::string fake_info = ROSTER_INFO_FAKE;
// roster-info with test-only kernel variants of "bench_twice" (tests/tools/variant_kernels.cpp).
const std::string variants_info = ROSTER_INFO_VARIANTS;
// The installed roster-info, with every backend this build has.
const std::string real_info = ROSTER_INFO_EXE;

json load_schema() { return json::parse(read_text(ROSTER_INFO_SCHEMA)); }


TEST(Schema, ValidatorRejectsWhatTheSchemaForbids) {
  schema_validator v(load_schema());
  temp_dir cache;
  auto r = info(fake_info, {"--json"}, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(v.validate(doc), std::vector<std::string>{});
  auto broken = doc;
  broken.erase("backends");
  EXPECT_FALSE(v.validate(broken).empty());
  broken = doc;
  broken["adapters"][0]["memory_bytes"] = "8 GiB";
  EXPECT_FALSE(v.validate(broken).empty());
  broken = doc;
  broken["adapters"][0]["type"] = "gpu";
  EXPECT_FALSE(v.validate(broken).empty());
  broken = doc;
  broken["circuits"][0]["surprise"] = 1;
  EXPECT_FALSE(v.validate(broken).empty());
  broken = doc;
  broken["backends"][0]["error"] = {{"code", "io"}, {"message", "no fix part"}, {"what", "x"}, {"fix", ""}};
  EXPECT_FALSE(v.validate(broken).empty());
  broken = doc;
  broken["adapters"][0]["uuid_short"] = "GPU-xyz";
  EXPECT_FALSE(v.validate(broken).empty());
}

TEST(Json, MatchesSchemaAndContent) {
  temp_dir cache;
  auto r = info(fake_info, {"--json"}, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  json doc = json::parse(r.out);
  schema_validator v(load_schema());
  EXPECT_EQ(v.validate(doc), std::vector<std::string>{});
  // Backends by rank: toolfake (5) before toolbroken (7).
  std::vector<std::string> ids;
  for (const auto& b : doc["backends"]) ids.push_back(b["id"]);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], "toolfake");
  EXPECT_EQ(ids[1], "toolbroken");
  EXPECT_TRUE(doc["backends"][0]["opened"].get<bool>());
  EXPECT_EQ(doc["backends"][0]["adapters"], 2);
  EXPECT_FALSE(doc["backends"][1]["opened"].get<bool>());
  EXPECT_EQ(doc["backends"][1]["error"]["fix"], "install the toolbroken driver");
  EXPECT_EQ(doc["adapters"][0]["spec"], "toolfake:0");
  EXPECT_EQ(doc["adapters"][0]["uuid_short"], "GPU-10111213");
  EXPECT_EQ(doc["adapters"][1]["pci_address"], "0000:00:07.0");
  EXPECT_EQ(doc["inventory"]["entries"], 2);
  // Circuits: the two fake GPUs, the first primary, the second auxiliary.
  ASSERT_GE(doc["circuits"].size(), 2u);
  EXPECT_EQ(doc["circuits"][0]["role"], "primary");
  EXPECT_EQ(doc["circuits"][0]["preferred"], "toolfake:0");
  EXPECT_EQ(doc["circuits"][1]["role"], "auxiliary");
  EXPECT_EQ(doc["tuning"]["path"], cache.path + "/roster/tuning.json");
}

TEST(Json, RealBinaryMatchesSchema) {
  temp_dir cache;
  auto r = info(real_info, {"--json"}, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  schema_validator v(load_schema());
  EXPECT_EQ(v.validate(json::parse(r.out)), std::vector<std::string>{});
}

// Under ROSTER_TUNING=measure the decisions measure and record: the report
// said "(0 records)" and showed no figure beside reasons that cited the new
// record, because it read the file before deciding.
TEST(Json, AMeasuringRunReportsWhatItRecorded) {
  temp_dir cache;
  auto r = info(real_info, {"--json"}, cache.path, {{"ROSTER_TUNING", "measure"}, {"ROSTER_DEVICE_SELECTOR", "cpu:*"}});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NE(r.err.find("ROSTER_TUNING=measure: cpu:0"), std::string::npos) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["tuning"]["records"], 1) << doc["tuning"].dump();
  bool figure = false;
  for (const auto& a : doc["adapters"])
    if (a["spec"] == "cpu:0") figure = !a["triad_gbps"].is_null();
  EXPECT_TRUE(figure) << doc["adapters"].dump();
}

// Site files: ROSTER_TUNING_PATH's entries were read silently: a missing
// file, a corrupt one and an entry that is not an absolute path showed
// nothing in the report (only ROSTER_TRACE said so).
TEST(Json, SiteTuningFileProblemsAreWarnings) {
  temp_dir cache;
  const std::string corrupt = cache.path + "/site.json";
  write_text(corrupt, "{\"format\": \"roster-tuning\", \"version\": 2, \"records\": [");
  const std::string list = "/nonexistent/site.json:relative.json:" + corrupt;
  auto r = info(fake_info, {"--json"}, cache.path, {{"ROSTER_TUNING_PATH", list}});
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  std::string all;
  for (const auto& w : doc["warnings"]) all += w["message"].get<std::string>() + "\n";
  EXPECT_NE(all.find("'/nonexistent/site.json' does not exist"), std::string::npos) << all;
  EXPECT_NE(all.find("'relative.json' is not an absolute path"), std::string::npos) << all;
  EXPECT_NE(all.find(corrupt), std::string::npos) << all;
  // None of them is a problem when the variable is unset.
  auto clean = info(fake_info, {"--json"}, cache.path);
  ASSERT_EQ(clean.status, 0) << clean.err;
  EXPECT_EQ(clean.out.find("ROSTER_TUNING_PATH"), std::string::npos) << clean.out;
}

TEST(Table, HasEverySectionInOrder) {
  temp_dir cache;
  auto r = info(fake_info, {}, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string& t = r.out;
  EXPECT_EQ(t.rfind("roster ", 0), 0u) << t;
  EXPECT_NE(t.find("first inventory collection took"), std::string::npos);
  const auto backends = find_line(t, "Backends"), adapters = find_line(t, "Adapters"),
             circuits = find_line(t, "Circuits"), tuning = find_line(t, "Tuning: ");
  ASSERT_NE(backends, std::string::npos) << t;
  ASSERT_NE(adapters, std::string::npos) << t;
  ASSERT_NE(circuits, std::string::npos) << t;
  ASSERT_NE(tuning, std::string::npos) << t;
  EXPECT_LT(backends, adapters);
  EXPECT_LT(adapters, circuits);
  EXPECT_LT(circuits, tuning);
  // Column headers.
  EXPECT_TRUE(has_row(t, "rank +backend +capability +status +adapters")) << t;
  EXPECT_NE(t.find("  spec  "), std::string::npos);
  EXPECT_NE(t.find("name"), std::string::npos);
  EXPECT_NE(t.find("pci"), std::string::npos);
  EXPECT_NE(t.find("memory"), std::string::npos);
  EXPECT_NE(t.find("driver"), std::string::npos);
  EXPECT_TRUE(has_row(t, "spec +name +type +uuid +pci +memory +driver +triad")) << t;
  EXPECT_TRUE(has_row(t, "# +role +preferred +adapters +type +name")) << t;
  // The broken backend shows its error and its Fix.
  const std::string backends_part = t.substr(backends, adapters - backends);
  EXPECT_TRUE(has_row(backends_part, "5 +toolfake +dispatches +opened +2")) << backends_part;
  EXPECT_TRUE(has_row(backends_part, "7 +toolbroken +dispatches +not opened +1")) << backends_part;
  EXPECT_NE(backends_part.find("  toolbroken: no usable driver (test)"), std::string::npos) << backends_part;
  EXPECT_EQ(backends_part.find("toolbroken: toolbroken:"), std::string::npos) << backends_part;
  EXPECT_NE(backends_part.find("Fix: install the toolbroken driver"), std::string::npos);
  // Each adapter row: spec, name, type, short UUID, PCI, memory, driver.
  const std::string adapters_part = t.substr(adapters, circuits - adapters);
  EXPECT_TRUE(has_row(adapters_part, "toolfake:0 +Fake GPU 0 +discrete +GPU-10111213 +0000:00:06\\.0 +8\\.0 GiB +580\\.1 +-"))
      << adapters_part;
  EXPECT_TRUE(has_row(adapters_part, "toolbroken:0 +Fake GPU 0 +other +- +- +8\\.0 GiB +580\\.1 +-")) << adapters_part;
  const std::string circuits_part = t.substr(circuits, tuning - circuits);
  EXPECT_TRUE(has_row(circuits_part, "0 +primary +toolfake:0 +toolfake:0 +discrete +Fake GPU 0")) << circuits_part;
  EXPECT_TRUE(has_row(circuits_part, "1 +auxiliary +toolfake:1 +toolfake:1 +discrete +Fake GPU 1")) << circuits_part;
}

TEST(Table, RealBinaryPrintsEverySection) {
  temp_dir cache;
  auto r = info(real_info, {}, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Backends", "Adapters", "Circuits"}) EXPECT_NE(find_line(r.out, s), std::string::npos) << s;
}

TEST(Table, HonoursTheSelector) {
  temp_dir cache;
  auto r = info(fake_info, {"--json"}, cache.path, {{"ROSTER_DEVICE_SELECTOR", "toolfake:1"}});
  ASSERT_EQ(r.status, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["selector"], "toolfake:1");
  ASSERT_EQ(doc["circuits"].size(), 1u);
  EXPECT_EQ(doc["circuits"][0]["preferred"], "toolfake:1");
  for (const auto& a : doc["adapters"]) EXPECT_EQ(a["selected"].get<bool>(), a["spec"] == "toolfake:1") << a["spec"];
  auto t = info(fake_info, {}, cache.path, {{"ROSTER_DEVICE_SELECTOR", "toolfake:1"}});
  EXPECT_NE(t.out.find("dropped by ROSTER_DEVICE_SELECTOR: toolfake:0"), std::string::npos) << t.out;
  // A malformed selector is a warning with its Fix, not a usage error.
  auto bad = info(fake_info, {"--json"}, cache.path, {{"ROSTER_DEVICE_SELECTOR", "cuda:zz:q"}});
  EXPECT_EQ(bad.status, 0);
  json warned = json::parse(bad.out);
  ASSERT_FALSE(warned["warnings"].empty());
  EXPECT_FALSE(warned["warnings"][0]["fix"].get<std::string>().empty());
}

// An adapter a vendor mask hides is not listed (nor opened: acquire refuses
// it, tests/devices): the job was not given that device. The fake GPUs are
// NVIDIA's (0x10de), so CUDA_VISIBLE_DEVICES=-1 hides both.
TEST(Table, AdaptersAVendorMaskHidesAreNotListed) {
  temp_dir cache;
  auto count_fake = [](const json& doc) {
    int n = 0;
    for (const auto& a : doc["adapters"]) n += a["backend"] == "toolfake";
    return n;
  };
  auto open = info(fake_info, {"--json"}, cache.path);
  ASSERT_EQ(open.status, 0) << open.err;
  EXPECT_EQ(count_fake(json::parse(open.out)), 2) << open.out;  // the control
  auto masked = info(fake_info, {"--json"}, cache.path, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  ASSERT_EQ(masked.status, 0) << masked.err;
  const json doc = json::parse(masked.out);
  EXPECT_EQ(count_fake(doc), 0) << masked.out;
  for (const auto& c : doc["circuits"]) EXPECT_NE(c["preferred"].get<std::string>().rfind("toolfake:", 0), 0u) << c;
  auto text = info(fake_info, {}, cache.path, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  EXPECT_NE(text.out.find("hidden by a vendor mask: toolfake:0 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("hidden by a vendor mask: toolfake:1 ("), std::string::npos) << text.out;
}

// A mask entry roster cannot follow (an index past the node's GPUs, a value
// that is not a list) was said under ROSTER_TRACE only: a job given
// CUDA_VISIBLE_DEVICES=7 on a node of two GPUs saw them hidden, no word why.
TEST(Table, AVendorMaskEntryThatNamesNoDeviceIsAWarning) {
  temp_dir cache;
  const auto warned = [](const json& doc) {
    for (const auto& w : doc["warnings"])
      if (w["message"].get<std::string>().find("vendor mask: CUDA_VISIBLE_DEVICES") != std::string::npos) return w;
    return json();
  };
  auto r = info(fake_info, {"--json"}, cache.path, {{"CUDA_VISIBLE_DEVICES", "0,gpu0"}});
  ASSERT_EQ(r.status, 0) << r.err;
  const json w = warned(json::parse(r.out));
  ASSERT_FALSE(w.is_null()) << r.out;
  EXPECT_NE(w["message"].get<std::string>().find("entry 'gpu0' is not a device index or UUID"), std::string::npos)
      << w;
  EXPECT_NE(w["fix"].get<std::string>().find("or unset it"), std::string::npos) << w;
  // '-1' hides every GPU on purpose: no warning; nor without a mask.
  r = info(fake_info, {"--json"}, cache.path, {{"CUDA_VISIBLE_DEVICES", "-1"}});
  EXPECT_TRUE(warned(json::parse(r.out)).is_null()) << r.out;
  r = info(fake_info, {"--json"}, cache.path);
  EXPECT_TRUE(warned(json::parse(r.out)).is_null()) << r.out;
}

TEST(Table, HonoursTrace) {
  temp_dir cache;
  auto r = info(fake_info, {}, cache.path, {{"ROSTER_TRACE", "1"}});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("toolfake:0"), std::string::npos) << r.err;
  auto quiet = info(fake_info, {}, cache.path);
  EXPECT_EQ(quiet.err, "");
}

TEST(Exit, RequireSucceedsOnlyWhenTheBackendOpens) {
  temp_dir cache;
  EXPECT_EQ(info(fake_info, {"--require", "toolfake"}, cache.path).status, 0);
  EXPECT_EQ(info(fake_info, {"--require", "TOOLFAKE", "--json"}, cache.path).status, 0);
  auto broken = info(fake_info, {"--require", "toolbroken"}, cache.path);
  EXPECT_EQ(broken.status, 3);
  EXPECT_NE(broken.err.find("Fix: install the toolbroken driver"), std::string::npos) << broken.err;
  EXPECT_NE(broken.out.find("Backends"), std::string::npos);  // the report is still printed
  auto missing = info(fake_info, {"--require", "cuda"}, cache.path);
  EXPECT_EQ(missing.status, 3);
  EXPECT_NE(missing.err.find("Fix: "), std::string::npos);
  EXPECT_EQ(info(fake_info, {"--require", "toolfake", "--require", "nosuch"}, cache.path).status, 3);
  // Without --require a backend that does not open is not a failure.
  EXPECT_EQ(info(fake_info, {}, cache.path).status, 0);
}

TEST(Exit, UsageErrorsAreTwo) {
  temp_dir cache;
  EXPECT_EQ(info(fake_info, {"--bogus"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"extra"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"--require"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"bench", "--size", "lots"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"bench", "--size", "0"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"bench", "--reps", "0"}, cache.path).status, 2);
  EXPECT_EQ(info(fake_info, {"bench", "--adapter", ":1"}, cache.path).status, 2);
  auto nosuch = info(fake_info, {"bench", "--adapter", "nosuch:0"}, cache.path);
  EXPECT_EQ(nosuch.status, 2);
  // Printed from the error's parts: what went wrong, then its Fix: line.
  EXPECT_NE(nosuch.err.find("roster-info bench: --adapter nosuch:0: unknown backend 'nosuch'; known: "),
            std::string::npos)
      << nosuch.err;
  EXPECT_NE(nosuch.err.find("\nFix: name one of the known backends, e.g. --adapter cpu:0\n"), std::string::npos)
      << nosuch.err;
  auto help = info(fake_info, {"--help"}, cache.path);
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--require"), std::string::npos);
  EXPECT_EQ(info(fake_info, {"bench", "--help"}, cache.path).status, 0);
}

TEST(Exit, CorruptTuningFileIsAWarningNotAFailure) {
  temp_dir cache;
  std::filesystem::create_directories(cache.path + "/roster");
  write_text(cache.path + "/roster/tuning.json", "{\"format\": \"roster-tuning\", \"vers");
  auto r = info(fake_info, {}, cache.path);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("warning: " + cache.path + "/roster/tuning.json: tuning file: not valid JSON"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Fix: run 'roster-info bench': it keeps roster's own tuning file aside"), std::string::npos)
      << r.out;
  auto j = info(fake_info, {"--json"}, cache.path);
  EXPECT_EQ(j.status, 0);
  json doc = json::parse(j.out);
  ASSERT_FALSE(doc["warnings"].empty());
  EXPECT_EQ(doc["warnings"][0]["code"], "io");
  // The bench replaces it, keeping the corrupt file beside it, and says so.
  auto b = info(fake_info, {"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "2"}, cache.path);
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.err.find("the corrupt file is kept as " + cache.path + "/roster/tuning.json.corrupt-"),
            std::string::npos)
      << b.err;
  EXPECT_TRUE(roster::load_tuning(cache.path + "/roster/tuning.json"));
}

TEST(Bench, PlainLinesTableRecordsAndChart) {
  temp_dir cache;
  const std::string svg = cache.path + "/chart.svg";
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--adapter", "toolfake:1", "--size", "4K", "--reps",
                            "3", "--svg", svg},
                cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  // Not a terminal: one plain line per figure, no progress bar.
  EXPECT_EQ(r.out.find('\r'), std::string::npos);
  for (const char* type : {"float", "double"})
    for (const char* op : {"copy", "mul", "add", "triad", "dot"})
      EXPECT_NE(find_line(r.out, std::string("toolfake:0 ") + type + " " + op + ": "), std::string::npos)
          << type << " " << op << "\n" << r.out;
  EXPECT_NE(find_line(r.out, "toolfake:0 grid sync triad|dot: native "), std::string::npos) << r.out;
  EXPECT_NE(find_line(r.out, "toolfake:1 grid sync triad|dot: no native grid sync"), std::string::npos) << r.out;
  // The GB/s table and the native-vs-split table.
  EXPECT_NE(find_line(r.out, "GB/s, median of 3 reps, 4096 elements per array"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("adapter      type         copy       mul       add     triad       dot"), std::string::npos);
  EXPECT_TRUE(has_row(r.out, "toolfake:0 +double( +[0-9.]+){5}")) << r.out;
  EXPECT_TRUE(has_row(r.out, "toolfake:0 +triad\\|dot +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +(native|split)")) << r.out;
  EXPECT_NE(find_line(r.out, "Grid sync per program shape, '|' a grid_sync (median;"), std::string::npos);
  // Tuning records for both adapters, keyed by backend, UUID and driver.
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 2u);
  const auto& rec = file->records[0];
  EXPECT_EQ(rec.backend, "toolfake");
  EXPECT_EQ(rec.device, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
  EXPECT_EQ(rec.driver_version, "580.1");
  EXPECT_EQ(rec.elements, 4096u);
  EXPECT_EQ(rec.figures.size(), 10u);
  EXPECT_TRUE(rec.split_faster_for("triad|dot").has_value());
  EXPECT_FALSE(file->records[1].split_faster_for("triad|dot").has_value());
  // The chart: an SVG with a bar per figure.
  const std::string s = read_text(svg);
  EXPECT_EQ(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  std::size_t bars = 0;
  for (std::size_t at = 0; (at = s.find("<title>", at)) != std::string::npos; ++at) ++bars;
  EXPECT_EQ(bars, 20u);
  EXPECT_NE(s.find("<title>toolfake:1 double triad: "), std::string::npos);
  // The records now show in the report.
  auto report = info(fake_info, {"--json"}, cache.path);
  json doc = json::parse(report.out);
  EXPECT_TRUE(doc["adapters"][0]["triad_gbps"].is_number());
  EXPECT_EQ(doc["tuning"]["records"], 2);
}

// Runs roster-info with stdout on a pseudo-terminal; returns what it wrote there.
std::string run_on_terminal(const std::vector<std::string>& argv, const std::string& cache) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    ::unsetenv("ROSTER_DEVICE_SELECTOR");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(master);
  ::waitpid(pid, nullptr, 0);
  return out;
}

// Under the GB/s table, how each adapter's built-in kernels were loaded
// (roster::kernels_loaded): Vulkan's pipelines at open here (lavapipe), CUDA's
// module on a GPU node. A backend that loads nothing (the CPU, the test
// backends) has no row, and without any such adapter there is no section.
TEST(Bench, KernelsLoadIsShownUnderTheTable) {
  temp_dir cache;
  auto cpu = info(real_info, {"bench", "--adapter", "cpu:0", "--size", "1K", "--reps", "1", "--no-save", "--no-kernels"},
                  cache.path);
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  EXPECT_EQ(cpu.out.find("Kernels' load"), std::string::npos) << cpu.out;
#if defined(ROSTER_TEST_HAVE_VULKAN)
  auto r = info(real_info, {"bench", "--adapter", "vulkan:0", "--adapter", "cpu:0", "--size", "1K", "--reps", "1",
                            "--no-save", "--no-kernels"},
                cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto at = find_line(r.out, "Kernels' load, once per device (before its first program)");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GT(at, r.out.find("GB/s, median of 1 reps")) << r.out;
  EXPECT_TRUE(has_row(r.out, "vulkan:0 +[0-9.]+ [mun]?s +vkCreateComputePipelines: (15|30) pipelines from the "
                             "committed SPIR-V, at open"))
      << r.out;
  EXPECT_FALSE(has_row(r.out, "cpu:0 +[0-9.]+ [mun]?s ")) << r.out;
#endif
}

TEST(Bench, ProgressBarOnATerminal) {
  temp_dir cache;
  const std::string out =
      run_on_terminal({fake_info, "bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1", "--no-save"},
                      cache.path);
  EXPECT_NE(out.find("\r["), std::string::npos) << out;
  EXPECT_NE(out.find("]  11/11 toolfake:1 grid sync"), std::string::npos) << out;
  EXPECT_EQ(out.find("toolfake:1 float copy: "), std::string::npos) << "plain lines on a terminal";
  EXPECT_NE(out.find("GB/s, median of 1 reps"), std::string::npos);
}

TEST(Bench, NoSaveWritesNothingAndBrokenAdapterIsReported) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--adapter", "toolbroken:0", "--adapter", "toolfake:5", "--size", "1K",
                            "--reps", "1", "--no-save"},
                cache.path);
  // Neither adapter asked for measured anything: a failure, with each named.
  EXPECT_EQ(r.status, roster::info::nothing_measured) << r.err;
  EXPECT_NE(r.err.find("toolbroken:0: no usable driver (test)\nFix: install the toolbroken driver"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Fix: use toolfake:0 or toolfake:1"), std::string::npos) << r.err;
  for (const char* spec : {"toolbroken:0", "toolfake:5"})
    EXPECT_NE(r.err.find(std::string("roster-info bench: ") + spec + ": nothing was measured"), std::string::npos)
        << r.err;
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json"));
}

TEST(Bench, AFigureOfTheLoadIsSaidAndNotRecorded) {
  // A CPU pool whose threads cannot get the cores (two busy processes on two
  // cores) ran triad at a fraction of one plain thread: a triad of 2^22
  // doubles that takes 2 s stands for it (0.05 GB/s, 5% of a plain thread
  // at 1 GB/s: the ASan build's plain thread measured 5.6 GB/s on the 2-core
  // box under CI's load, so 0.6 s, 0.17 GB/s, sat too near the line). The
  // bench says so and records nothing for it; a figure of a small size (1K),
  // bound by the dispatch, is not judged; the same slow adapter as a GPU's
  // is not the host's load, and is recorded.
  temp_dir cache;
  const std::vector<std::string> big = {"bench", "--adapter", "toolfake:1", "--size", "2^22", "--reps", "1",
                                        "--no-kernels"};
  auto r = info(fake_info, big, cache.path, {{"TOOLFAKE_CPU", "1"}, {"TOOLFAKE_SLOW_TRIAD_MS", "2000"}});
  EXPECT_NE(r.err.find("could not get the cores"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix: measure when the machine is not busy"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json")) << r.out << r.err;
  auto small = info(fake_info, {"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "2"}, cache.path,
                    {{"TOOLFAKE_CPU", "1"}, {"TOOLFAKE_DISPATCH_US", "20000"}});
  EXPECT_EQ(small.status, 0) << small.err;
  EXPECT_EQ(small.err.find("could not get the cores"), std::string::npos) << small.err;
  EXPECT_TRUE(std::filesystem::exists(cache.path + "/roster/tuning.json")) << small.out << small.err;
  temp_dir gpu_cache;
  auto gpu = info(fake_info, big, gpu_cache.path, {{"TOOLFAKE_SLOW_TRIAD_MS", "600"}});
  EXPECT_EQ(gpu.status, 0) << gpu.err;
  EXPECT_EQ(gpu.err.find("could not get the cores"), std::string::npos) << gpu.err;
  EXPECT_TRUE(std::filesystem::exists(gpu_cache.path + "/roster/tuning.json")) << gpu.out << gpu.err;
}

TEST(Bench, MeasuringWaitsForAnotherProcessMeasuringIntoTheSameFile) {
  // Two benches at once spoil each other's figures: a bench that records
  // holds the tuning file's measure lock while it measures, and waits for it.
  temp_dir cache;
  std::filesystem::create_directories(cache.path + "/roster");
  const std::string lock = cache.path + "/roster/tuning.json.measure.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::thread release([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::flock(fd, LOCK_UN);
    ::close(fd);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"}, cache.path);
  const auto took = std::chrono::steady_clock::now() - t0;
  release.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GE(took, std::chrono::milliseconds(1400)) << "the bench did not wait for the measure lock";
  EXPECT_TRUE(std::filesystem::exists(cache.path + "/roster/tuning.json")) << r.err;
}

TEST(Bench, WrongResultIsAnErrorAndNotRecorded) {
  temp_dir cache;
  // toolfake:1 right, then toolfake:0 with a triad that writes one wrong element.
  auto ok = info(fake_info, {"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "2"}, cache.path);
  ASSERT_EQ(ok.status, 0) << ok.err;
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--adapter", "toolfake:1", "--size", "1K", "--reps", "2"},
                cache.path, {{"TOOLFAKE_WRONG_TRIAD", "1"}});
  EXPECT_EQ(r.status, roster::info::wrong_result) << r.out << r.err;
  EXPECT_NE(find_line(r.out, "toolfake:0 float triad: wrong result"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("toolfake:0 float triad: wrong result: element 512 of 1024 is"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing is recorded for this adapter\nFix: the backend's kernel for this op is wrong"),
            std::string::npos)
      << r.err;
  // The ops after the wrong one are not judged against a reference they no longer match.
  EXPECT_EQ(r.err.find("toolfake:0 float dot: wrong result"), std::string::npos) << r.err;
  // No record for toolfake:0; toolfake:1's (right) record is kept.
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 1u);
  EXPECT_EQ(file->records[0].spec, "toolfake:1");
}

TEST(Bench, RightResultsAreVerified) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--adapter", "toolfake:1", "--size", "4K", "--reps", "1", "--no-save"}, cache.path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("wrong result"), std::string::npos) << r.out;
}

TEST(Bench, EveryAdapterBySelector) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--size", "1K", "--reps", "1", "--no-save"}, cache.path,
                {{"ROSTER_DEVICE_SELECTOR", "toolfake:*"}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(find_line(r.out, "toolfake:0 float copy: "), std::string::npos) << r.out;
  EXPECT_NE(find_line(r.out, "toolfake:1 float copy: "), std::string::npos);
  EXPECT_EQ(r.out.find("toolbroken"), std::string::npos);
}

TEST(Bench, KernelVariantsAreTimedCheckedAndTheWinnerRecorded) {
  temp_dir cache;
  auto r = info(variants_info, {"bench", "--adapter", "cpu:0", "--size", "4K", "--reps", "3"}, cache.path);
  // The deliberately wrong variant is refused: an error with a Fix and a failing status.
  EXPECT_EQ(r.status, 5) << r.out << r.err;
  EXPECT_NE(r.err.find("variant 'wrong_for_tests' is wrong"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix: fix the variant's kernel"), std::string::npos) << r.err;
  EXPECT_TRUE(has_row(r.out, "cpu:0\\s+bench_twice\\s+double\\s+wrong_for_tests\\s+-\\s+\\S+%\\s+wrong result, never chosen"))
      << r.out;
  EXPECT_NE(find_line(r.out, "cpu:0 kernel bench_twice float: variant '"), std::string::npos) << r.out;
  // The record holds a choice for each type, never the wrong variant, with the STREAM figures.
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 1u);
  const auto& rec = file->records[0];
  EXPECT_TRUE(rec.triad_bandwidth().has_value());
  ASSERT_EQ(rec.kernels.size(), 2u);
  for (const auto& k : rec.kernels) {
    EXPECT_EQ(k.op, "bench_twice");
    EXPECT_EQ(k.size_class, 12u);
    EXPECT_EQ(k.baseline, "plain");
    EXPECT_TRUE(k.variant == "plain" || k.variant == "by_add") << k.variant;
    EXPECT_GT(k.baseline_ns, 0.0);
  }
}

TEST(Bench, NoKernelsSkipsTheVariants) {
  temp_dir cache;
  auto r = info(variants_info, {"bench", "--adapter", "cpu:0", "--size", "1K", "--reps", "1", "--no-kernels"},
                cache.path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("bench_twice"), std::string::npos) << r.out;
  auto file = roster::load_tuning(cache.path + "/roster/tuning.json");
  ASSERT_TRUE(file);
  ASSERT_EQ(file->records.size(), 1u);
  EXPECT_TRUE(file->records[0].kernels.empty());
}

}  // namespace

// roster-info bind: one JSON line per rank; under a launcher ranks go
// round-robin over the GPU circuits (the two toolfake GPUs), never to the
// `other` device or the CPU; strict mode with nothing to satisfy it fails.
TEST(Bind, OneJsonLinePerRankOverTheGpus) {
  temp_dir cache;
  std::vector<std::string> adapters;
  for (int r = 0; r < 4; ++r) {
    auto out = info(fake_info, {"bind"}, cache.path,
                    {{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r)},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                     {"OMPI_COMM_WORLD_RANK", std::to_string(10 + r)}});
    ASSERT_EQ(out.status, 0) << out.err;
    json line = json::parse(out.out);
    EXPECT_EQ(line["rank"], 10 + r);
    EXPECT_EQ(line["local_rank"], r);
    EXPECT_EQ(line["local_size"], 4);
    EXPECT_EQ(line["type"], "discrete");
    EXPECT_EQ(line["sharing"], 2);
    EXPECT_TRUE(line["uuid"].get<std::string>().starts_with("GPU-")) << out.out;
    EXPECT_FALSE(line["host"].get<std::string>().empty());
    EXPECT_FALSE(line["cpuset"].get<std::string>().empty());
    EXPECT_EQ(line["reasons"].size(), 2u);
    EXPECT_NE(line["warning"].get<std::string>().find("4 local ranks on 2 GPU circuits"), std::string::npos);
    adapters.push_back(line["adapter"]);
  }
  EXPECT_EQ(adapters, (std::vector<std::string>{"toolfake:0", "toolfake:1", "toolfake:0", "toolfake:1"}));

  auto strict = info(fake_info, {"bind"}, cache.path, {{"ROSTER_REQUIRE", "cpu,gpu"}});
  EXPECT_EQ(strict.status, roster::info::bind_failed) << strict.out;
  EXPECT_NE(strict.err.find("ROSTER_REQUIRE='cpu,gpu'"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("Fix: "), std::string::npos) << strict.err;

  auto huge = info(fake_info, {"bind"}, cache.path,
                   {{"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "100000000"}});
  EXPECT_EQ(huge.status, roster::info::bind_failed);
  EXPECT_NE(huge.err.find("more than 65536 local ranks"), std::string::npos) << huge.err;
}

// The report says what ROSTER_REQUIRE asks and whether it holds.
TEST(Report, ShowsTheRequirement) {
  temp_dir cache;
  auto holds = info(fake_info, {"--json"}, cache.path, {{"ROSTER_REQUIRE", "discrete"}});
  ASSERT_EQ(holds.status, 0) << holds.err;
  json doc = json::parse(holds.out);
  EXPECT_EQ(doc["requirement"]["text"], "discrete");
  EXPECT_EQ(doc["requirement"]["holds"], true);
  for (const auto& c : doc["circuits"]) EXPECT_EQ(c["type"], "discrete");
  auto fails = info(fake_info, {}, cache.path, {{"ROSTER_REQUIRE", "integrated"}});
  EXPECT_NE(fails.out.find("ROSTER_REQUIRE=integrated (does not hold"), std::string::npos) << fails.out;
  auto none = info(fake_info, {"--json"}, cache.path);
  EXPECT_TRUE(json::parse(none.out)["requirement"].is_null());
}
