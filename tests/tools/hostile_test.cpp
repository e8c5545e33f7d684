// Hostile cases of roster-info (docs/hostile.md): bytes that are not UTF-8 in
// the environment, output that cannot be written.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include "info.hpp"

#include <roster/detail/base/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
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

// The writer roster-info's JSON goes through keeps valid UTF-8 and writes
// every other byte as the text \xNN, in keys and values alike; nlohmann-json
// (strict) reads the result.
TEST(Hostile, JsonWriterKeepsGoodTextAndEscapesTheRest) {
  roster::detail::json_writer w;
  w.begin_object()
      .member("good", "cuda:0 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")
      .member("bytes", "\xff\xfe:\x80")
      .member("overlong", "\xc0\xaf")                 // overlong '/'
      .member("surrogate", "\xed\xa0\x80")           // a surrogate
      .member("past", "\xf4\x90\x80\x80")           // past U+10FFFF
      .member("cut", "ab\xe2\x82")                   // cut short
      .key("k\xff")
      .begin_array()
      .value("\xfe")
      .value(1)
      .begin_object()
      .member("x", "\x80")
      .end_object()
      .end_array()
      .end_object();
  json doc;
  ASSERT_NO_THROW(doc = json::parse(w.text())) << w.text();
  EXPECT_EQ(doc["good"], "cuda:0 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(doc["bytes"], "\\xff\\xfe:\\x80");
  EXPECT_EQ(doc["overlong"], "\\xc0\\xaf");
  EXPECT_EQ(doc["surrogate"], "\\xed\\xa0\\x80");
  EXPECT_EQ(doc["past"], "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(doc["cut"], "ab\\xe2\\x82");
  EXPECT_EQ(doc["k\\xff"][0], "\\xfe");
  EXPECT_EQ(doc["k\\xff"][1], 1);
  EXPECT_EQ(doc["k\\xff"][2]["x"], "\\x80");
}

// Integers stay integers (the schema's "integer"), a number that is not
// finite is null, empty containers close on their line, and the nesting is
// indented two spaces a level.
TEST(Hostile, JsonWriterShapesNumbersAndNesting) {
  roster::detail::json_writer w;
  w.begin_object()
      .member("big", std::uint64_t{1} << 60)
      .member("million", 1000000)
      .member("negative", -7)
      .member("gbps", 4371.5)
      .member("inf", std::numeric_limits<double>::infinity())
      .member("flag", false)
      .key("none")
      .null()
      .key("empty")
      .begin_array()
      .end_array()
      .key("nested")
      .begin_object()
      .key("list")
      .begin_array()
      .value(1)
      .value("two")
      .end_array()
      .end_object()
      .end_object();
  EXPECT_EQ(w.text(),
            "{\n  \"big\": 1152921504606846976,\n  \"million\": 1000000,\n  \"negative\": -7,\n  \"gbps\": 4371.5,\n"
            "  \"inf\": null,\n  \"flag\": false,\n  \"none\": null,\n  \"empty\": [],\n  \"nested\": {\n"
            "    \"list\": [\n      1,\n      \"two\"\n    ]\n  }\n}");
  const json doc = json::parse(w.text());
  EXPECT_TRUE(doc["big"].is_number_integer());
  EXPECT_EQ(doc["big"].get<std::uint64_t>(), std::uint64_t{1} << 60);
  EXPECT_TRUE(doc["million"].is_number_integer());
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
  EXPECT_NE(r.err.find("the chart " + cache.path + "/no/such/folder/chart.svg: cannot write it: the folder " +
                       cache.path + "/no/such/folder does not exist"),
            std::string::npos)
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

// Case 1: a FIFO where the tuning file should be: the read opened it without
// O_NONBLOCK, so roster-info, --json and bench waited forever for a writer.
// Each run goes through timeout(1): a hang is exit 124, not a stuck suite.
TEST(Hostile, FifoForTuningFileIsAnErrorNotAHang) {
  temp_dir cache;
  std::filesystem::create_directories(cache.path + "/roster");
  const std::string fifo = cache.path + "/roster/tuning.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::map<std::string, std::optional<std::string>> env = {
      {"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}};
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"--json"}, {"bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1"}}) {
    std::vector<std::string> argv = {"/usr/bin/timeout", "20", fake_info};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, env);
    const std::string name = args.empty() ? "table" : args[0];
    ASSERT_NE(r.status, 124) << name << " hung on the FIFO";
    // The report runs; the bench measured and could not record: status 4.
    EXPECT_EQ(r.status, name == "bench" ? roster::info::output_failed : 0) << name << ": " << r.err;
    EXPECT_NE((r.out + r.err).find(fifo + " is a FIFO, not a regular file"), std::string::npos)
        << name << ": " << r.out << r.err;
    // Never `rm` of what is not a regular file or a link (docs/hostile.md, case 43).
    EXPECT_NE((r.out + r.err).find("name a regular file (this is a FIFO"), std::string::npos)
        << name << ": " << r.out << r.err;
    EXPECT_EQ((r.out + r.err).find("rm '" + fifo + "'"), std::string::npos) << name << ": " << r.out << r.err;
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the bench replaced the FIFO";
}

// Case 5: a tuning file the user could not read was taken as corrupt and
// replaced by bench: its records were lost and its mode became 0644.
TEST(Hostile, BenchNeverReplacesATuningFileItCannotRead) {
  temp_dir cache;
  std::filesystem::create_directories(cache.path + "/roster");
  const std::string path = cache.path + "/roster/tuning.json";
  write_text(path, "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": []}\n");
  // Root reads a file of mode 000: as root, the bench runs as nobody, in a
  // folder nobody owns.
  std::vector<std::string> as;
  if (::geteuid() == 0) {
    for (const auto& p : {cache.path, cache.path + "/roster", path}) ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
    as = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  std::vector<std::string> argv = as;
  argv.insert(argv.end(), {fake_info, "bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1"});
  auto b = run(argv,
               {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  EXPECT_NE(b.err.find("Permission denied; it is not replaced, and no record was written"), std::string::npos)
      << b.err;
  EXPECT_NE(b.err.find("Fix: make the file readable"), std::string::npos) << b.err;
  EXPECT_EQ(b.out.find("wrote 1 tuning record"), std::string::npos) << b.out;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0u);
  ::chmod(path.c_str(), 0644);
  EXPECT_EQ(read_text(path), "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": []}\n");
}

// Case 9: XDG_CACHE_HOME naming a file: bench said "it is replaced now" and
// then that it could not create the folder. One true thing now.
TEST(Hostile, CacheHomeThatIsAFileIsSaidOnce) {
  temp_dir dir;
  const std::string file = dir.path + "/passwd";
  write_text(file, "root:x:0:0::/root:/bin/sh\n");
  auto b = run({fake_info, "bench", "--adapter", "toolfake:0", "--size", "1K", "--reps", "1"},
               {{"XDG_CACHE_HOME", file}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  EXPECT_EQ(b.err.find("replaced"), std::string::npos) << b.err;
  EXPECT_EQ(b.err.find("cannot create the folder"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("tuning file: " + file + " is a file, not a folder"), std::string::npos) << b.err;
  std::size_t said = 0;
  for (std::size_t at = b.err.find("is a file, not a folder"); at != std::string::npos;
       at = b.err.find("is a file, not a folder", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << b.err;
  EXPECT_EQ(b.status, roster::info::output_failed) << b.err;  // measured, not recorded
  EXPECT_EQ(read_text(file), "root:x:0:0::/root:/bin/sh\n");
}

// XDG_CACHE_HOME naming a file: the report said "cannot open: Not a
// directory" and suggested chmod u+r on a path that cannot exist.
TEST(Hostile, CacheHomeThatIsAFileIsNamedInTheReport) {
  temp_dir dir;
  const std::string file = dir.path + "/passwd";
  write_text(file, "root:x:0:0::/root:/bin/sh\n");
  for (const auto& args : {std::vector<std::string>{}, std::vector<std::string>{"--json"}}) {
    std::vector<std::string> argv = {fake_info};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, {{"XDG_CACHE_HOME", file}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string text = args.empty() ? r.out : json::parse(r.out)["warnings"].dump();
    EXPECT_NE(text.find("tuning file " + file + "/roster/tuning.json: " + file +
                        " is a file, not a folder; nothing is read or written there"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("point XDG_CACHE_HOME at a folder"), std::string::npos) << text;
    EXPECT_EQ(text.find("chmod"), std::string::npos) << text;
  }
}

// The chart went through std::ofstream: a FIFO at its path blocked the open
// for ever, and a link to nowhere created the file the link names. Each run
// goes through timeout(1): a hang is exit 124.
TEST(Hostile, ChartFollowsTheOpenRules) {
  temp_dir cache, dir;
  auto chart = [&](const std::string& path) {
    return run({"/usr/bin/timeout", "20", fake_info, "bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1",
                "--no-save", "--svg", path},
               {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  };
  const std::string fifo = dir.path + "/fifo.svg";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = chart(fifo);
  ASSERT_NE(r.status, 124) << "the chart hung on the FIFO";
  EXPECT_EQ(r.status, roster::info::output_failed) << r.err;
  EXPECT_NE(r.err.find(fifo + " is a FIFO, not a regular file; nothing is written to it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
  // A link to nowhere: refused, and what it names is not created.
  const std::string target = dir.path + "/elsewhere.svg", link = dir.path + "/link.svg";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  r = chart(link);
  EXPECT_EQ(r.status, roster::info::output_failed) << r.err;
  EXPECT_NE(r.err.find(link + " is a link to a file that does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(target)) << "a file was created through a link";
  // A file that exists is replaced, through a link too.
  write_text(target, "old");
  r = chart(link);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_text(target).rfind("<svg", 0), 0u);
  r = chart(dir.path + "/new.svg");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_text(dir.path + "/new.svg").rfind("<svg", 0), 0u);
}

// Case 60: `roster-info bench --export /dev/stdout >> run.log` followed the
// link to run.log, called it corrupt, kept it aside and renamed a JSON over
// it. An output that is a stream is written as one: run.log keeps what it
// had and gets the export (and the chart) appended; nothing is made beside it.
TEST(Hostile, OutputsThatAreStreamsAreWrittenAsStreams) {
  temp_dir cache, dir;
  const std::string log = dir.path + "/run.log", err = dir.path + "/err";
  write_text(log, "earlier output\n");
  struct stat before {};
  ASSERT_EQ(::stat(log.c_str(), &before), 0);
  auto r = run({"/bin/sh", "-c",
                "exec /usr/bin/timeout 20 \"$0\" bench --adapter toolfake:1 --size 1K --reps 1 --no-save "
                "--export /dev/stdout --svg /dev/stdout >> \"$1\"",
                fake_info, log},
               {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  EXPECT_EQ(r.status, 0) << r.err;
  struct stat after {};
  ASSERT_EQ(::stat(log.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "run.log was replaced";
  const std::string text = read_text(log);
  EXPECT_EQ(text.rfind("earlier output\n", 0), 0u) << text;
  EXPECT_NE(text.find("\"format\": \"roster-tuning\""), std::string::npos) << text;
  EXPECT_NE(text.find("<svg"), std::string::npos) << text;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"run.log"}) << "a corrupt copy, a lock or a temporary file was made";
  // A FIFO that a process reads: the export and the chart go down it, and it stays a FIFO.
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const char* option : {"--export", "--svg"}) {
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    r = run({"/usr/bin/timeout", "20", fake_info, "bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1",
             "--no-save", option, fifo},
            {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
    std::string got(1 << 16, '\0');
    const ssize_t n = ::read(reader, got.data(), got.size());
    ::close(reader);
    got.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    EXPECT_EQ(r.status, 0) << option << ": " << r.err;
    EXPECT_NE(got.find(std::string(option) == "--svg" ? "<svg" : "roster-tuning"), std::string::npos) << got;
    struct stat st {};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << option << ": the FIFO was replaced";
  }
  names.clear();
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fifo", "run.log"}));
}

// Case 61: `roster-info bench --svg ~/.cache/roster/tuning.json` exited 0
// with the chart where the records were. An output naming roster's tuning
// file or its lock (by inode, through a link, or by path before it exists)
// is refused before anything is measured.
TEST(Hostile, OutputsOverTheTuningFileAreRefused) {
  temp_dir cache, dir;
  const std::string tuning = cache.path + "/roster/tuning.json";
  auto bench = [&](const std::string& option, const std::string& path) {
    return run({"/usr/bin/timeout", "20", fake_info, "bench", "--adapter", "toolfake:1", "--size", "1K", "--reps",
                "1", "--no-save", option, path},
               {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  };
  // Before the file exists: by its path.
  auto r = bench("--svg", tuning);
  EXPECT_EQ(r.status, roster::info::usage_error) << r.err;
  EXPECT_NE(r.err.find("roster's tuning file " + tuning), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tuning));
  r = run({fake_info, "bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"},
          {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt}});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string records = read_text(tuning);
  ASSERT_NE(records.find("roster-tuning"), std::string::npos);
  const std::string link = dir.path + "/link.svg";
  ASSERT_EQ(::symlink(tuning.c_str(), link.c_str()), 0);
  for (const auto& [option, path] : std::vector<std::pair<std::string, std::string>>{
           {"--svg", tuning}, {"--svg", link}, {"--svg", tuning + ".lock"}, {"--export", tuning},
           {"--export", link}, {"--export", tuning + ".lock"}}) {
    r = bench(option, path);
    EXPECT_EQ(r.status, roster::info::usage_error) << option << " " << path << ": " << r.err;
    EXPECT_NE(r.err.find(option + " " + path + " is "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
    EXPECT_EQ(read_text(tuning), records) << option << " " << path;
  }
}

// Case 62: ROSTER_OPENCL_LOADER naming a FIFO hung every roster program in
// dlopen (ROSTER_VULKAN_LOADER had the check). Every variable whose path
// roster hands to dlopen is checked in one place (roster::env::library):
// roster-info answers at once, naming the variable, with a Fix.
TEST(Hostile, ALoaderVariableNamingAFifoIsAnErrorNotAHang) {
  temp_dir cache, dir;
  const std::string fifo = dir.path + "/libloader.so.1";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const char* variable : {"ROSTER_OPENCL_LOADER", "ROSTER_VULKAN_LOADER"}) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{}, std::vector<std::string>{"--json"}}) {
      std::vector<std::string> argv{"/usr/bin/timeout", "20", ROSTER_INFO_EXE};
      argv.insert(argv.end(), args.begin(), args.end());
      const auto start = std::chrono::steady_clock::now();
      auto r = run(argv, {{"XDG_CACHE_HOME", cache.path}, {"ROSTER_DEVICE_SELECTOR", std::nullopt},
                          {variable, fifo}});
      const auto took = std::chrono::steady_clock::now() - start;
      ASSERT_NE(r.status, 124) << variable << ": roster-info hung on the FIFO";
      EXPECT_LT(took, std::chrono::seconds(15)) << variable;
      const std::string said = r.out + r.err;
      EXPECT_NE(said.find(std::string(variable) + "='" + fifo + "' is a FIFO, not a library file"), std::string::npos)
          << variable << " " << said;
      EXPECT_NE(said.find(args.empty() ? "Fix: point " + std::string(variable) : "point " + std::string(variable)),
                std::string::npos)
          << said;
    }
  }
}

}  // namespace
