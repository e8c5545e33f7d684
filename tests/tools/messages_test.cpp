// What roster-info prints on its failure runs (docs/hostile.md, case 34):
// every line of standard output and error, and every string of --json, is
// held to one rule: each layer adds its context once ("cuda: cuda: ...",
// "cpu:0: ... cpu:0: ..." fail). The library's own paths are checked by
// tests/backends/messages_test.cpp with the same rule.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include "../support/messages.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace tools_test;
using nlohmann::json;

const std::string fake_info = ROSTER_INFO_FAKE;

bool is_backend(std::string_view id) {
  for (std::string_view b : {"cpu", "cuda", "vulkan", "toolfake", "toolbroken"})
    if (id == b) return true;
  return false;
}

void check_text(const std::string& how, std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(at, nl - at);
    if (auto r = roster_test::repeated_context(line, is_backend))
      ADD_FAILURE() << how << ": the context repeats, " << *r << ":\n" << line;
    at = nl + 1;
  }
}

void check_json(const std::string& how, const json& v) {
  if (v.is_string()) check_text(how, v.get<std::string>());
  else if (v.is_structured())
    for (const auto& item : v) check_json(how, item);
}

struct failure_run {
  std::string how;
  std::vector<std::string> args;
  std::map<std::string, std::optional<std::string>> env;
};

TEST(Messages, EveryFailureRunOfRosterInfoSaysEachContextOnce) {
  temp_dir cache, folder_cache, corrupt_cache;
  std::filesystem::create_directories(folder_cache.path + "/roster/tuning.json");
  std::filesystem::create_directories(corrupt_cache.path + "/roster");
  write_text(corrupt_cache.path + "/roster/tuning.json", "{\"format\": \"roster-tuning\", \"records\": [");
  const std::vector<failure_run> runs = {
      {"a backend that does not open", {}, {}},
      {"the same as JSON", {"--json"}, {}},
      {"a selector range", {}, {{"ROSTER_DEVICE_SELECTOR", "cuda:12-15"}}},
      {"a bad PCI address", {"--json"}, {{"ROSTER_DEVICE_SELECTOR", "pci=::"}}},
      {"a typo in the requirement", {}, {{"ROSTER_REQUIRE", "gpus"}}},
      {"an empty requirement word", {"--json"}, {{"ROSTER_REQUIRE", "gpu,,cpu"}}},
      {"a folder as the tuning file", {}, {{"XDG_CACHE_HOME", folder_cache.path}}},
      {"a corrupt tuning file", {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1"},
       {{"XDG_CACHE_HOME", corrupt_cache.path}}},
      {"a bench of a backend that does not open",
       {"bench", "--adapter", "toolbroken:0", "--size", "1K", "--reps", "1", "--no-save"}, {}},
      {"a CPU allocation past the memory", {"bench", "--adapter", "cpu:0", "--size", "1T", "--reps", "1", "--no-save"}, {}},
      {"an unknown spec", {"bench", "--adapter", "nonesuch:0", "--no-save"}, {}},
      {"a requirement of a backend not built", {"--require", "nonesuch"}, {}},
      {"strict mode on bind", {"bind"}, {{"ROSTER_REQUIRE", "cpu,gpu"}}},
      {"an unknown default device", {"--why"}, {{"ROSTER_DEVICE", "nonesuch:0"}}},
      {"the trace of a report", {}, {{"ROSTER_TRACE", "1"}}},
  };
  for (const auto& run : runs) {
    auto env = run.env;
    const bool own_cache = env.count("XDG_CACHE_HOME") != 0;
    const std::string home = own_cache ? *env["XDG_CACHE_HOME"] : cache.path;
    env.erase("XDG_CACHE_HOME");
    auto r = info(fake_info, run.args, home, env);
    EXPECT_NE(r.out + r.err, "") << run.how;
    EXPECT_TRUE((r.out + r.err).find("Fix: ") != std::string::npos) << run.how << ": nothing failed\n" << r.out << r.err;
    check_text(run.how + " (stderr)", r.err);
    if (std::find(run.args.begin(), run.args.end(), "--json") != run.args.end()) {
      const json doc = json::parse(r.out, nullptr, false);
      ASSERT_FALSE(doc.is_discarded()) << run.how << ":\n" << r.out;
      check_json(run.how + " (--json)", doc);
    } else {
      check_text(run.how + " (stdout)", r.out);
    }
  }
}

// The rule's checker on roster-info's lines: it catches the stutters it
// looks for and passes the lines that read right.
TEST(Messages, TheCheckerReadsRosterInfoLines) {
  EXPECT_TRUE(roster_test::repeated_context("  toolbroken: toolbroken: no usable driver (test)", is_backend));
  EXPECT_TRUE(roster_test::repeated_context("toolbroken:0: toolbroken: no usable driver (test)", is_backend));
  EXPECT_FALSE(roster_test::repeated_context("  toolbroken: no usable driver (test)", is_backend));
  EXPECT_FALSE(roster_test::repeated_context("roster-info bench: toolbroken:0: nothing was measured", is_backend));
}

}  // namespace
