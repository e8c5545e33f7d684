// Hostile cases of roster-info, round four (docs/hostile.md): a command line
// or environment that cannot be right stops before anything is measured, and
// text from outside roster never prints a line of its own.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include "info.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace tools_test;

const std::string fake_info = ROSTER_INFO_FAKE;
const std::string real_info = ROSTER_INFO_EXE;

// Returns the first line of text that starts (after blanks) with `start`, or "".
std::string line_starting(const std::string& text, std::string_view start) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(at, nl - at);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, start.size(), start) == 0) return line;
    at = nl + 1;
  }
  return {};
}

// Case 70: ROSTER_DEVICE_SELECTOR=cpu:zz let the bench measure and record
// every adapter and exit 0; `bind bench` ran the bench and dropped bind; a
// shape of 20,000 ops exited 0. Each is now a usage error, with a Fix, before
// anything is measured.
TEST(HostileEcho, AWrongCommandLineOrSelectorStopsTheBenchFirst) {
  temp_dir cache;
  auto r = info(fake_info, {"bench", "--size", "1K", "--reps", "1"}, cache.path,
                {{"ROSTER_DEVICE_SELECTOR", "cpu:zz"}});
  EXPECT_EQ(r.status, roster::info::usage_error) << r.err;
  EXPECT_NE(r.err.find("cpu:zz"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nFix: "), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("GB/s"), std::string::npos) << "nothing is measured: " << r.out;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"bench", "bind"}, {"bind", "bench"}}) {
    r = info(fake_info, args, cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("bench and bind were both named"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\nFix: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("GB/s"), std::string::npos) << r.out;
  }
  std::string shape = "copy";
  for (int i = 1; i < 20000; ++i) shape += i % 2 ? "|dot" : ",copy";
  r = info(fake_info, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--shape", shape},
           cache.path);
  EXPECT_EQ(r.status, roster::info::usage_error) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("steps, more than a program's 1024"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 4096u) << "the shape is cut where it is echoed";
  EXPECT_EQ(r.out.find("GB/s"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json"));
}

// Case 71: a newline in ROSTER_DEVICE_SELECTOR, ROSTER_REQUIRE, ROSTER_TUNING
// or ROSTER_DEVICE printed a line of its own, `Fix: rm -rf ~`, in the table
// of roster-info (the library's own echoes were escaped in case 64). No line
// of the table, the decision, the bench's stderr, bind's error or a warning
// starts with it; and a 120 KB ROSTER_REQUIRE gives bounded output.
TEST(HostileEcho, NoEchoedValueForgesALine) {
  temp_dir cache;
  const std::string forged = "cuda:0\nFix: rm -rf ~\x1b[2J";
  for (const char* variable : {"ROSTER_DEVICE_SELECTOR", "ROSTER_REQUIRE", "ROSTER_TUNING", "ROSTER_DEVICE"})
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{}, {"--why"}, {"bench", "--adapter", "cpu:0", "--size", "1K", "--reps", "1",
                                                  "--no-save"},
          {"bind"}}) {
      auto argv = args;
      argv.insert(argv.begin(), {"/usr/bin/timeout", "60"});
      auto r = info(real_info, argv, cache.path, {{variable, forged}});
      EXPECT_NE(r.status, 124) << variable;
      const std::string said = r.out + "\n" + r.err;
      EXPECT_EQ(line_starting(said, "Fix: rm"), "") << variable << " " << (args.empty() ? "" : args[0]) << ":\n"
                                                    << said;
      EXPECT_EQ(said.find('\x1b'), std::string::npos) << variable << ": an escape byte was printed raw";
    }
  const std::string huge(120 * 1024, 'g');
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"--why"}, {"bind"}}) {
    auto r = info(real_info, args, cache.path, {{"ROSTER_REQUIRE", huge}});
    EXPECT_LT(r.out.size() + r.err.size(), 32u * 1024) << (args.empty() ? "report" : args[0]);
  }
}

// Case 72: a bad ROSTER_CPU_THREADS made the CPU backend fail to open and the
// default device silently became lavapipe. The decision names the CPU
// backend's error among its reasons.
TEST(HostileEcho, TheDecisionSaysWhyTheCpuBackendIsMissing) {
  temp_dir cache;
  auto r = info(real_info, {"--why"}, cache.path, {{"ROSTER_CPU_THREADS", "abc"}});
  const std::string reason = line_starting(r.out, "backend cpu: left out, its enumerator failed:");
  EXPECT_NE(reason, "") << r.out;
  EXPECT_NE(reason.find("ROSTER_CPU_THREADS='abc'"), std::string::npos) << reason;
}

// Case 75: ROSTER_VULKAN_LOADER=libc.so.6 said "the Vulkan loader has no
// vkGetInstanceProcAddr" and "reinstall libvulkan1". It names the library and
// the variable that gave it, as the OpenCL loader's error does.
TEST(HostileEcho, AVulkanLoaderVariableNamingAnotherLibraryIsNamed) {
  temp_dir cache;
  auto r = info(real_info, {}, cache.path, {{"ROSTER_VULKAN_LOADER", "libc.so.6"}});
  const std::string said = r.out + r.err;
  EXPECT_NE(said.find("ROSTER_VULKAN_LOADER='libc.so.6' names a library without vkGetInstanceProcAddr"),
            std::string::npos)
      << said;
  EXPECT_EQ(said.find("libvulkan1"), std::string::npos) << said;
  EXPECT_NE(said.find("point ROSTER_VULKAN_LOADER at the Vulkan loader"), std::string::npos) << said;
}

}  // namespace
