// Every error message the backends give, gathered from the paths the backend
// suites go through on every registered backend (a bad ordinal, malformed
// settings, an allocation beyond any device, released and foreign buffers,
// a bad program) and checked by one rule: each layer adds its context once
// (no "cuda: cuda: ..." or "vulkan:0: ... vulkan:0: ..."), no source text
// (a call's arguments, a member name), and a Fix. meson.build runs it in
// every environment the backend suites use (no Vulkan driver or loader, a
// CUDA driver older than the runtime, an NVIDIA GPU without a driver), and
// the messages are printed so the log shows what a user would read.
#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/messages.hpp"

#include "../support/scoped_env.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

using roster_test::scoped_env;

// The errors gathered, with what provoked each.
struct gathered {
  std::vector<std::pair<std::string, roster::error>> errors;
  template <class T>
  void add(const std::string& how, const roster::expected<T>& r) {
    if (!r) errors.emplace_back(how, r.error());
  }
};

// A backend's own variables, each set to a malformed value in turn.
struct setting {
  const char* backend;
  const char* variable;
  const char* junk;
};
constexpr setting settings[] = {
    {"cpu", "ROSTER_CPU_THREADS", "many"},       {"cuda", "ROSTER_CUDA_VARIANT", "fast"},
    {"cuda", "ROSTER_CUDA_GRID_SYNC", "maybe"},  {"vulkan", "ROSTER_VULKAN_VECTOR", "maybe"},
    {"vulkan", "ROSTER_VULKAN_MAX_RANGE", "lots"},
};

void gather_device(const std::string& id, roster::device& d, gathered& g) {
  const std::string spec = d.adapter().spec();
  g.add(spec + " allocate 2^40 doubles", d.allocate<double>(std::size_t{1} << 40));
  g.add(spec + " allocate 0", d.allocate<float>(0));
  auto x = d.allocate<float>(16);
  g.add(spec + " allocate 16", x);
  if (!x) return;
  std::vector<float> host(8);
  g.add(spec + " upload a short span", d.upload(*x, std::span<const float>(host)));
  roster::program bad;
  bad.call("roster_no_such_kernel", {*x});
  g.add(spec + " dispatch an unknown kernel", d.dispatch(bad));
  g.add(spec + " release", d.release(*x));
  g.add(spec + " release again", d.release(*x));
  host.resize(16);
  g.add(spec + " download a released buffer", d.download(*x, std::span<float>(host)));
  roster::program p;
  p.fill(*x, 1.0f);
  g.add(spec + " dispatch a released buffer", d.dispatch(p));
  if (id != "cpu") g.add(spec + " native of another backend", roster::native<roster::cpu::native>(d));
}

// The core's own failures, each with the environment that provokes it: an
// unknown spec, a bad selector, requirement, default device or flag, a
// tuning file that cannot be read or is not valid.
void gather_core(gathered& g) {
  g.add("acquire an unknown backend", roster::acquire("nonesuch:0"));
  g.add("acquire a bad spec", roster::acquire("cpu:x"));
  g.add("get_device of an ordinal past the adapters", roster::get_device("cpu:7"));
  struct run {
    const char* variable;
    const char* value;
  };
  for (auto [variable, value] : {run{"ROSTER_DEVICE_SELECTOR", "cuda:12-15"}, run{"ROSTER_DEVICE_SELECTOR", "pci=::"},
                                 run{"ROSTER_REQUIRE", "gpus"}, run{"ROSTER_REQUIRE", "gpu,,cpu"},
                                 run{"ROSTER_REQUIRE", "discrete"}, run{"ROSTER_DEVICE", "nonesuch:0"},
                                 run{"ROSTER_BIND_CPUS", "maybe"}, run{"ROSTER_TUNING", "fast"}}) {
    scoped_env bad(variable, value);
    roster::rescan();
    const std::string how = std::string(variable) + "=" + value + ": ";
    g.add(how + "circuits", roster::circuits());
    g.add(how + "default_device", roster::default_device());
    g.add(how + "bind_rank", roster::bind_rank());
    g.add(how + "acquire cpu", roster::acquire("cpu"));
  }
  roster::rescan();
  // One folder per process: the suite runs this binary four times at once
  // (one per loader setup), and a shared name raced in remove_all.
  const std::string folder = ::testing::TempDir() + "/roster-messages-tuning-" + std::to_string(::getpid());
  std::filesystem::create_directories(folder + "/tuning.json");
  g.add("load_tuning of a folder", roster::load_tuning(folder + "/tuning.json"));
  std::filesystem::remove_all(folder);
  g.add("parse_tuning of bad JSON", roster::parse_tuning("{\"format\": [1,"));
  auto figures = roster::parse_tuning(R"({"format": "roster-tuning", "version": 2, "records": [{"backend": "cpu", )"
                                      R"("device": "x", "driver": "1", "gbps": {"double": {"triad": 1e308}}}]})");
  if (figures)
    for (const auto& w : figures->warnings) g.errors.emplace_back("a figure beyond any memory's bandwidth", w);
}

gathered gather_all() {
  gathered g;
  gather_core(g);
  for (const auto& b : roster::registered_backends()) {
    const std::string id(b.id());
    g.add(id + " enumerate", roster::enumerate_adapters(*b.registration));
    g.add(id + ":99 open", roster::acquire(id + ":99"));
    for (const auto& s : settings) {
      if (id != s.backend) continue;
      scoped_env junk(s.variable, s.junk);
      g.add(id + ":0 open with " + s.variable + "=" + s.junk, roster::acquire(id + ":0"));
    }
    auto d = roster::acquire(id + ":0");
    g.add(id + ":0 open", d);
    if (d) gather_device(id, **d, g);
  }
  return g;
}

// Where the context repeats (tests/support/messages.hpp), a backend being
// an id registered here.
std::optional<std::string> repeated_context(std::string_view what) {
  return roster_test::repeated_context(what, [](std::string_view id) { return roster::find_backend(id) != nullptr; });
}

// Source text: a call's arguments or a member of the code, as a stringized
// expression would leave them.
std::optional<std::string> source_text(std::string_view what) {
  static const std::regex code(R"((\b[a-z_]+_\.[a-zA-Z]|\bnullptr\b|\(&|, &|->[a-z]))");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(what.begin(), what.end(), m, code)) return m.str();
  return std::nullopt;
}

TEST(BackendMessages, EachLayerAddsItsContextOnceWithNoSourceTextAndAFix) {
  const gathered g = gather_all();
  ASSERT_FALSE(g.errors.empty()) << "nothing failed: the paths above no longer reach an error";
  for (const auto& [how, e] : g.errors) {
    std::printf("message (%s): %s\n", how.c_str(), e.message().c_str());
    if (auto r = repeated_context(e.what())) ADD_FAILURE() << how << ": the context repeats, " << *r << ":\n" << e.message();
    if (auto s = source_text(e.what())) ADD_FAILURE() << how << ": source text '" << *s << "' in:\n" << e.message();
    EXPECT_FALSE(e.fix().empty()) << how << ": no Fix:\n" << e.message();
  }
}

// The checker itself: it catches the stutters issue 29 found and passes the
// messages that read right.
TEST(BackendMessages, TheCheckerCatchesWhatItLooksFor) {
  EXPECT_TRUE(repeated_context("cpu: cpu: no usable driver"));
  EXPECT_TRUE(repeated_context("cpu:0: cpu:0: allocate: too much"));
  EXPECT_TRUE(repeated_context("cpu: cpu:0: allocate"));
  EXPECT_TRUE(repeated_context("cpu:0: 64 double elements: cpu:0: allocate: failed"));
  EXPECT_TRUE(repeated_context("cpu:0: cpu: no usable driver"));
  EXPECT_FALSE(repeated_context("cpu:0: allocate: 16777216 double elements need 128.0 MiB"));
  EXPECT_FALSE(repeated_context("cpu: ROSTER_CPU_THREADS='many' is not a whole number from 1 to 4096"));
  EXPECT_TRUE(source_text("vulkan:0: allocate: fn_.vkAllocateMemory(device_, &info, nullptr, &memory) failed"));
  EXPECT_FALSE(source_text("vulkan:0: allocate: 64 double elements: vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)"));
}

}  // namespace
