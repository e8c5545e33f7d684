// Hostile cases of roster-info (docs/hostile.md): bytes that are not UTF-8 in
// the environment, output that cannot be written.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include "info.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace tools_test;
using nlohmann::json;

const std::string fake_info = ROSTER_INFO_FAKE;

// Runs roster-info-fake with standard output sent to `out_path` (/dev/full,
// say); returns its exit status and standard error.
run_result info_to(const std::string& out_path, std::vector<std::string> args, const std::string& cache) {
  temp_dir dir;
  const std::string err = dir.path + "/err";
  args.insert(args.begin(), fake_info);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    ::unsetenv("ROSTER_DEVICE_SELECTOR");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  run_result r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_text(err);
  return r;
}

// Case 2: a selector, cache folder or home that is not UTF-8 made nlohmann
// throw type_error 316 from dump(): roster-info --json ended with SIGABRT.
TEST(Hostile, JsonOfBytesThatAreNotUtf8) {
  temp_dir cache;
  const std::string bad_cache = cache.path + "/\xc3\x28-cache";
  const std::map<std::string, std::optional<std::string>> envs[] = {
      {{"ROSTER_DEVICE_SELECTOR", "\xff\xfe:\x80"}, {"XDG_CACHE_HOME", cache.path}},
      {{"XDG_CACHE_HOME", bad_cache}},
      {{"XDG_CACHE_HOME", std::nullopt}, {"HOME", cache.path + "/h\xe9me"}},
  };
  for (const auto& env : envs) {
    auto r = run({fake_info, "--json"}, env);
    ASSERT_EQ(r.status, 0) << r.err;
    json doc;
    ASSERT_NO_THROW(doc = json::parse(r.out)) << r.out;  // parse rejects invalid UTF-8
    EXPECT_TRUE(doc["warnings"].is_array());
    if (env.count("ROSTER_DEVICE_SELECTOR") != 0) {
      // The bytes are named, and the warning says what was wrong with them.
      EXPECT_EQ(doc["selector"], "\\xff\\xfe:\\x80");
      ASSERT_FALSE(doc["warnings"].empty());
      EXPECT_NE(doc["warnings"][0]["message"].get<std::string>().find("'\\xff\\xfe:\\x80'"), std::string::npos)
          << doc["warnings"].dump();
    } else {
      const std::string path = doc["tuning"]["path"].is_string() ? doc["tuning"]["path"].get<std::string>() : "";
      EXPECT_TRUE(path.find("\\xc3(-cache") != std::string::npos || path.find("h\\xe9me") != std::string::npos)
          << doc.dump(2);
    }
  }
}

TEST(Hostile, ValidUtf8KeepsGoodTextAndEscapesTheRest) {
  using roster::info::valid_utf8;
  EXPECT_EQ(valid_utf8("cuda:0 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "cuda:0 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(valid_utf8("\xff\xfe:\x80"), "\\xff\\xfe:\\x80");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(valid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(valid_utf8("ab\xe2\x82"), "ab\\xe2\\x82");       // cut short
  json doc = {{"k\xff", {"\xfe", 1, {{"x", "\x80"}}}}};
  roster::info::make_valid_utf8(doc);
  EXPECT_NO_THROW((void)doc.dump());
  EXPECT_EQ(doc["k\\xff"][0], "\\xfe");
  EXPECT_EQ(doc["k\\xff"][2]["x"], "\\x80");
}

// Case 7: output that was asked for and not written exited 0.
TEST(Hostile, OutputThatCannotBeWrittenIsAFailure) {
  temp_dir cache;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--json"}, {}, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--no-save"}}) {
    auto r = info_to("/dev/full", args, cache.path);
    EXPECT_EQ(r.status, roster::info::output_failed) << (args.empty() ? "table" : args[0]) << ": " << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
  }
  // --svg into a folder that does not exist.
  auto r = run({fake_info, "bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--no-save", "--svg",
                cache.path + "/no/such/folder/chart.svg"},
               {{"XDG_CACHE_HOME", cache.path}});
  EXPECT_EQ(r.status, roster::info::output_failed) << r.err;
  EXPECT_NE(r.err.find("cannot write the chart to '" + cache.path + "/no/such/folder/chart.svg'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
  // --svg "" named no file: it used to write nothing and say nothing.
  r = run({fake_info, "bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1", "--no-save", "--svg", ""},
          {{"XDG_CACHE_HOME", cache.path}});
  EXPECT_EQ(r.status, roster::info::usage_error) << r.err;
  EXPECT_NE(r.err.find("--svg names no file"), std::string::npos) << r.err;
}

// Case 4: roster-info said nothing of plugin files it could not open.
TEST(Hostile, RefusedPluginsAreReportedAndTraced) {
  temp_dir cache, folder;
  std::filesystem::copy_file("/lib/x86_64-linux-gnu/libm.so.6", folder.path + "/libm.so");
  const std::map<std::string, std::optional<std::string>> env = {
      {"XDG_CACHE_HOME", cache.path}, {"ROSTER_PLUGIN_PATH", folder.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}};
  auto r = run({fake_info, "--json"}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out);
  bool named = false;
  for (const auto& w : doc["warnings"])
    if (w["what"].get<std::string>().find(folder.path + "/libm.so' is not a roster plugin") != std::string::npos)
      named = w["fix"].get<std::string>().size() > 0;
  EXPECT_TRUE(named) << doc["warnings"].dump(2);
  auto table = run({fake_info}, env);
  EXPECT_NE(table.out.find("warning: plugin '" + folder.path + "/libm.so' is not a roster plugin"), std::string::npos)
      << table.out;
  auto env_trace = env;
  env_trace["ROSTER_TRACE"] = "1";
  auto traced = run({fake_info}, env_trace);
  EXPECT_NE((traced.out + traced.err).find("plugin refused: plugin '" + folder.path + "/libm.so'"), std::string::npos)
      << traced.err;
}

}  // namespace
