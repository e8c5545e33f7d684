// roster-info's exit statuses (docs/roster-info.md, "Exit status"): the
// table in the docs is the table in the code; a bench that measured nothing
// fails; --json and --require on every subcommand; writes to standard output
// and standard error that fail give a status, never an abort.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include "info.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace {

using namespace tools_test;
using nlohmann::json;

const std::string fake_info = ROSTER_INFO_FAKE;

// Where a child's standard output or error goes.
struct stream {
  enum class kind { file, path, closed, broken_pipe } how = kind::file;
  std::string path;  // for kind::path
};
const stream to_file{};
const stream to_full{stream::kind::path, "/dev/full"};
const stream closed{stream::kind::closed, ""};
const stream broken_pipe{stream::kind::broken_pipe, ""};

// Runs roster-info-fake with a private cache, standard output and error sent
// as asked; returns the status and what went to files.
run_result run_to(std::vector<std::string> args, const stream& out, const stream& err, const std::string& cache,
                  const std::map<std::string, std::string>& env = {}) {
  temp_dir dir;
  const std::string files[2] = {dir.path + "/out", dir.path + "/err"};
  args.insert(args.begin(), fake_info);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Each stream is opened first, above 2, so that closing one cannot hand
    // its number to the other's file.
    const stream* how[2] = {&out, &err};
    int fds[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
      int fd = -1;
      switch (how[i]->how) {
        case stream::kind::file: fd = ::open(files[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); break;
        case stream::kind::path: fd = ::open(how[i]->path.c_str(), O_WRONLY); break;
        case stream::kind::closed: break;
        case stream::kind::broken_pipe: {
          int p[2];
          if (::pipe(p) != 0) ::_exit(126);
          ::close(p[0]);  // no reader: every write is EPIPE (and SIGPIPE)
          fd = p[1];
          break;
        }
      }
      fds[i] = fd < 0 ? -1 : ::fcntl(fd, F_DUPFD, 10);
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0) ::close(i + 1);
      else ::dup2(fds[i], i + 1);
    }
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    for (const char* v : {"ROSTER_DEVICE_SELECTOR", "ROSTER_TRACE", "ROSTER_REQUIRE", "ROSTER_DEVICE"}) ::unsetenv(v);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
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
  r.out = read_text(files[0]);
  r.err = read_text(files[1]);
  return r;
}

const std::vector<std::string> small_bench = {"--size", "1K", "--reps", "1", "--no-save"};

std::vector<std::string> bench_args(std::vector<std::string> head) {
  head.insert(head.end(), small_bench.begin(), small_bench.end());
  return head;
}

// The table under "### Exit status" in docs/roster-info.md is the code's
// table, row for row; --help prints it too.
TEST(Exit, DocsTableIsTheCodesTable) {
  const std::string docs = read_text(ROSTER_INFO_DOCS);
  const auto at = docs.find("### Exit status");
  ASSERT_NE(at, std::string::npos) << ROSTER_INFO_DOCS;
  std::vector<std::pair<int, std::string>> rows;
  std::size_t line = docs.find('\n', at);
  for (bool in_table = false; line != std::string::npos && line + 1 < docs.size();) {
    const std::size_t end = docs.find('\n', line + 1);
    const std::string text = docs.substr(line + 1, end == std::string::npos ? std::string::npos : end - line - 1);
    line = end;
    if (text.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    const auto bar = text.find('|', 1);
    std::string code = text.substr(1, bar - 1);
    code.erase(std::remove(code.begin(), code.end(), ' '), code.end());
    if (code.empty() || !std::isdigit(static_cast<unsigned char>(code[0]))) continue;  // header, rule
    std::string when = text.substr(bar + 1);
    while (!when.empty() && (when.back() == '|' || when.back() == ' ')) when.pop_back();
    while (!when.empty() && when.front() == ' ') when.erase(0, 1);
    rows.emplace_back(std::stoi(code), when);
  }
  std::vector<std::pair<int, std::string>> code;
  for (const auto& s : roster::info::exit_statuses) code.emplace_back(s.code, std::string(s.when));
  EXPECT_EQ(rows, code) << "docs/roster-info.md's exit status table differs from roster::info::exit_statuses";

  temp_dir cache;
  auto help = run_to({"--help"}, to_file, to_file, cache.path);
  EXPECT_EQ(help.status, 0) << help.err;
  ASSERT_NE(help.out.find("Exit status:"), std::string::npos) << help.out;
  for (const auto& s : roster::info::exit_statuses)
    EXPECT_NE(help.out.find("\n  " + std::to_string(s.code) + " "), std::string::npos) << s.code << "\n" << help.out;
}

// bench --export FILE writes a site file: the records keyed by device model,
// which another node with the same model reads through ROSTER_TUNING_PATH.
TEST(Exit, BenchExportWritesASiteFileOtherNodesRead) {
  temp_dir cache, site, other;
  const std::string file = site.path + "/site.json";
  auto r = run_to(bench_args({"bench", "--adapter", "toolfake:1", "--export", file}), to_file, to_file, cache.path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("exported 1 record by device model to " + file), std::string::npos) << r.out;
  const json doc = json::parse(read_text(file));
  ASSERT_EQ(doc["records"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["records"][0]["device"].get<std::string>().rfind("model:", 0), 0u) << doc.dump();
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json")) << "--no-save wrote the user's file";
  // A node that never measured (its own cache empty) ranks by the site file.
  r = run_to({"--json"}, to_file, to_file, other.path,
             {{"ROSTER_TUNING_PATH", file + ":" + other.path + "/roster/tuning.json"}});
  ASSERT_EQ(r.status, 0) << r.err;
  const json report = json::parse(r.out);
  bool seen = false;
  for (const auto& a : report["adapters"])
    if (a["spec"] == "toolfake:1") seen = a["triad_gbps"].is_number();
  EXPECT_TRUE(seen) << "toolfake:1 has no figure from the site file:\n" << r.out;
  // The control: without the site file the same node has no figure.
  r = run_to({"--json"}, to_file, to_file, other.path);
  const json unmeasured = json::parse(r.out);
  for (const auto& a : unmeasured["adapters"]) {
    if (a["spec"] == "toolfake:1") EXPECT_TRUE(a["triad_gbps"].is_null()) << r.out;
  }
  // A file that cannot be written: exit status output_failed, with a Fix.
  r = run_to(bench_args({"bench", "--adapter", "toolfake:1", "--export", file + "/under-a-file.json"}), to_file,
             to_file, cache.path);
  EXPECT_EQ(r.status, roster::info::output_failed) << r.err;
  EXPECT_NE(r.err.find("--export"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix:"), std::string::npos) << r.err;
}

// A site file that holds a device's own record (a user's tuning.json copied
// into ROSTER_TUNING_PATH) is read first and wins: the user's bench wrote
// its record and the decisions went on using the site's, without a word.
TEST(Exit, BenchSaysWhenASiteRecordShadowsItsOwn) {
  temp_dir first, user;
  const std::vector<std::string> bench = {"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"};
  auto r = run_to(bench, to_file, to_file, first.path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("read before"), std::string::npos) << r.err;
  const std::string site = first.path + "/roster/tuning.json";
  r = run_to(bench, to_file, to_file, user.path, {{"ROSTER_TUNING_PATH", site}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 1 tuning record"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("toolfake:1: " + site + " (ROSTER_TUNING_PATH) holds a record for this device and is read "
                       "before " + user.path + "/roster/tuning.json"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Fix: remove that record from " + site), std::string::npos) << r.err;
  // A site file keyed by model does not override the device's own record: no warning.
  const std::string model_file = first.path + "/site.json";
  r = run_to(bench_args({"bench", "--adapter", "toolfake:1", "--export", model_file}), to_file, to_file, first.path);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_to(bench, to_file, to_file, user.path, {{"ROSTER_TUNING_PATH", model_file}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("read before"), std::string::npos) << r.err;
}

// bench --size 2^36 on a GPU printed the out-of-memory error, a table of
// dashes, and exited 0 having measured nothing.
TEST(Exit, BenchThatMeasuredNothingFails) {
  temp_dir cache;
  const std::map<std::string, std::string> small_gpu = {{"TOOLFAKE_MAX_ELEMENTS", "1000"}};
  auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", "2^20", "--reps", "1"}, to_file, to_file,
                  cache.path, small_gpu);
  EXPECT_EQ(r.status, roster::info::nothing_measured) << r.err;
  EXPECT_NE(r.err.find("1048576 elements do not fit (test)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("roster-info bench: toolfake:1: nothing was measured, so nothing is recorded for it (the "
                       "errors above say why)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Fix: fix what the error above says (for out of memory, a smaller --size)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/roster/tuning.json")) << "a record of nothing was written";
  // One adapter measured and one not: still a failure, and the one is recorded.
  r = run_to({"bench", "--adapter", "toolfake:1", "--adapter", "toolbroken:0", "--size", "1K", "--reps", "1"}, to_file,
             to_file, cache.path);
  EXPECT_EQ(r.status, roster::info::nothing_measured) << r.err;
  EXPECT_NE(r.err.find("toolbroken:0: nothing was measured"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("toolfake:1: nothing was measured"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("wrote 1 tuning record"), std::string::npos) << r.out;
  // The control: what fits is measured, status 0.
  r = run_to(bench_args({"bench", "--adapter", "toolfake:1"}), to_file, to_file, cache.path,
             {{"TOOLFAKE_MAX_ELEMENTS", "1024"}});
  EXPECT_EQ(r.status, 0) << r.err;
  // A selector that keeps no adapter leaves nothing to measure.
  r = run_to(bench_args({"bench"}), to_file, to_file, cache.path, {{"ROSTER_DEVICE_SELECTOR", "!*:*"}});
  EXPECT_EQ(r.status, roster::info::nothing_measured) << r.err;
  EXPECT_NE(r.err.find("no adapter to measure"), std::string::npos) << r.err;
}

// bench measured, could not write the tuning records, said so as a warning
// and exited 0: a script that benches a node before its jobs went on as if
// the figures were on record.
TEST(Exit, BenchThatCannotSaveFails) {
  temp_dir cache;
  const std::string file_as_cache = cache.path + "/a-file";
  { std::ofstream(file_as_cache) << "not a folder\n"; }
  auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"}, to_file, to_file,
                  file_as_cache);
  EXPECT_EQ(r.status, roster::info::output_failed) << r.err;
  EXPECT_NE(r.err.find("roster-info bench: the tuning records"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Fix:"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("wrote 1 tuning record"), std::string::npos) << r.out;
  // The control: the same bench with a cache it can write exits 0.
  r = run_to({"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"}, to_file, to_file, cache.path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 1 tuning record"), std::string::npos) << r.out;
}

// bench --adapter cuda:99 printed "cuda:99: did not open" once per unit of
// progress (11 lines); an adapter that does not open is said once.
TEST(Exit, AnAdapterThatDoesNotOpenIsSaidOnce) {
  temp_dir cache;
  auto r = run_to(bench_args({"bench", "--adapter", "toolfake:99"}), to_file, to_file, cache.path);
  EXPECT_EQ(r.status, roster::info::nothing_measured) << r.err;
  std::size_t lines = 0;
  for (std::size_t at = r.out.find("toolfake:99: did not open"); at != std::string::npos;
       at = r.out.find("toolfake:99: did not open", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << r.out;
}

// --size 17179869185G wrapped to 2^30 after the range check.
TEST(Exit, SizeIsCheckedAfterItsUnit) {
  temp_dir cache;
  for (const char* size : {"17179869185G", "1025G", "1073741825M", "1099511627777K", "1099511627777", "2^41"}) {
    auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", size, "--reps", "1", "--no-save"}, to_file, to_file,
                    cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << size << ": " << r.err;
    EXPECT_NE(r.err.find("not an element count between 1 and 2^40"), std::string::npos) << size << ": " << r.err;
  }
  // 2^40 itself is a count: it runs (and does not fit the fake adapter).
  for (const char* size : {"1024G", "1048576M", "1099511627776"}) {
    auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", size, "--reps", "1", "--no-save"}, to_file, to_file,
                    cache.path, {{"TOOLFAKE_MAX_ELEMENTS", "1000"}});
    EXPECT_EQ(r.status, roster::info::nothing_measured) << size << ": " << r.err;
    EXPECT_NE(r.err.find("1099511627776 elements do not fit"), std::string::npos) << size << ": " << r.err;
  }
}

// The option parser's own errors (an unknown word, a missing value, a value
// out of range) ended with "Run with --help for more information." and no Fix.
TEST(Exit, UsageErrorsEndWithAFixOnce) {
  temp_dir cache;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"list"}, {"--bogus"}, {"--require"}, {"bench", "--reps", "0"}, {"bench", "--size"}, {"bind", "--nope"}}) {
    auto r = run_to(args, to_file, to_file, cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << args.front() << ": " << r.err;
    const auto fix = r.err.find("\nFix: ");
    ASSERT_NE(fix, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("\nFix: ", fix + 1), std::string::npos) << "one Fix: " << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << r.err;
  }
  // --require takes a backend id: '', a type word list or a raw byte is a
  // usage error that says so (it was "no backend '' is registered", Fix:
  // meson configure -D=enabled).
  for (const char* bad : {"", "cpu,vulkan", "\xff", "a b"}) {
    auto r = run_to({"--require", bad}, to_file, to_file, cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("is not a backend id"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("ROSTER_REQUIRE"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("meson configure"), std::string::npos) << r.err;
  }
  // A kind of device is not a backend: the Fix points at ROSTER_REQUIRE.
  auto kind = run_to({"--require", "gpu"}, to_file, to_file, cache.path);
  EXPECT_EQ(kind.status, roster::info::require_failed) << kind.err;
  EXPECT_NE(kind.err.find("ROSTER_REQUIRE=gpu"), std::string::npos) << kind.err;
  EXPECT_EQ(kind.err.find("meson configure"), std::string::npos) << kind.err;
  // An error that has its own Fix keeps it, once.
  auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", "0", "--no-save"}, to_file, to_file, cache.path);
  EXPECT_EQ(r.status, roster::info::usage_error) << r.err;
  const auto fix = r.err.find("\nFix: ");
  ASSERT_NE(fix, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\nFix: ", fix + 1), std::string::npos) << "one Fix: " << r.err;
}

// --json and --require were ignored by bench and bind (exit 0).
TEST(Exit, JsonAndRequireApplyToEverySubcommandOrAreRefused) {
  temp_dir cache;
  for (const auto& args : {bench_args({"--json", "bench", "--adapter", "toolfake:1"}),
                           bench_args({"bench", "--json", "--adapter", "toolfake:1"})}) {
    auto r = run_to(args, to_file, to_file, cache.path);
    EXPECT_EQ(r.status, roster::info::usage_error) << r.err;
    EXPECT_NE(r.err.find("--json applies to the report and to bind"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("GB/s"), std::string::npos) << "the bench ran: " << r.out;
  }
  // bind prints JSON either way.
  auto bound = run_to({"--json", "bind"}, to_file, to_file, cache.path);
  ASSERT_EQ(bound.status, 0) << bound.err;
  EXPECT_EQ(json::parse(bound.out)["adapter"], "toolfake:0");
  // --require before or after the subcommand: the bench and the binding do not run.
  for (const auto& args : {bench_args({"--require", "nonesuch", "bench", "--adapter", "toolfake:1"}),
                           bench_args({"bench", "--adapter", "toolfake:1", "--require", "nonesuch"}),
                           bench_args({"--require", "toolbroken", "bench", "--adapter", "toolfake:1"}),
                           std::vector<std::string>{"--require", "nonesuch", "bind"},
                           std::vector<std::string>{"bind", "--require", "toolbroken"}}) {
    auto r = run_to(args, to_file, to_file, cache.path);
    EXPECT_EQ(r.status, roster::info::require_failed) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_TRUE(r.err.find("no backend 'nonesuch' is registered") != std::string::npos ||
                r.err.find("--require toolbroken: the backend does not open here") != std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("Fix: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("GB/s"), std::string::npos) << "the bench ran: " << r.out;
    EXPECT_EQ(r.out.find("\"adapter\""), std::string::npos) << "bound: " << r.out;
  }
  // A usage error as well: the lower status, 2.
  auto both = run_to(bench_args({"--require", "nonesuch", "bench", "--adapter", "nonesuch:0"}), to_file, to_file,
                     cache.path);
  EXPECT_EQ(both.status, roster::info::usage_error) << both.err;
  // Met: they run.
  auto r = run_to(bench_args({"--require", "TOOLFAKE", "bench", "--adapter", "toolfake:1"}), to_file, to_file,
                  cache.path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
  r = run_to({"bind", "--require", "toolfake"}, to_file, to_file, cache.path);
  EXPECT_EQ(r.status, 0) << r.err;
}

// A closed standard error with nothing to say is no failure: --version and a
// plain report exited 4 under `2>&-` although nothing was lost (`2>/dev/full`
// gave 0 for the same runs).
TEST(Exit, AClosedStandardErrorWithNothingToSayIsNoFailure) {
  temp_dir cache;
  for (const stream& err : {to_full, closed}) {
    const std::string where = err.how == stream::kind::closed ? "closed" : "/dev/full";
    auto r = run_to({"--version"}, to_file, err, cache.path);
    EXPECT_EQ(r.status, 0) << where;
    EXPECT_NE(r.out.find("roster-info"), std::string::npos) << where;
    r = run_to({"bind"}, to_file, err, cache.path);
    EXPECT_EQ(r.status, 0) << where << ": " << r.out;
  }
}

// With standard error at /dev/full or closed, print_error let
// std::system_error escape: --require nonesuch and a failed bind ended in
// SIGABRT (134) instead of their statuses.
TEST(Exit, FailedWritesToStandardErrorGiveTheStatusNotAnAbort) {
  temp_dir cache;
  for (const stream& err : {to_full, closed}) {
    const std::string where = err.how == stream::kind::closed ? "closed" : "/dev/full";
    auto r = run_to({"--require", "nonesuch"}, to_file, err, cache.path);
    EXPECT_EQ(r.status, roster::info::require_failed) << where;
    EXPECT_NE(r.out.find("Backends"), std::string::npos) << where << ": the report is still printed";
    r = run_to({"bind"}, to_file, err, cache.path, {{"ROSTER_REQUIRE", "cpu,gpu"}});
    EXPECT_EQ(r.status, roster::info::bind_failed) << where;
    r = run_to(bench_args({"bench", "--adapter", "toolbroken:0"}), to_file, err, cache.path);
    EXPECT_EQ(r.status, roster::info::nothing_measured) << where;
  }
  // A run that succeeds but has a warning to say (a corrupt tuning file kept
  // aside): the warning is lost, so status 4; the records are saved anyway,
  // and nothing of standard error lands in roster's files. The control, with
  // standard error open, says the warning and is 0.
  for (const stream& err : {to_full, closed, to_file}) {
    temp_dir home;
    std::filesystem::create_directories(home.path + "/roster");
    write_text(home.path + "/roster/tuning.json", "{ not json");
    auto r = run_to({"bench", "--adapter", "toolfake:1", "--size", "1K", "--reps", "1"}, to_file, err, home.path);
    EXPECT_EQ(r.status, err.how == stream::kind::file ? 0 : roster::info::output_failed) << r.out << r.err;
    EXPECT_NE(r.out.find("wrote 1 tuning record"), std::string::npos) << r.out;
    if (err.how == stream::kind::file) {
      EXPECT_NE(r.err.find("warning: "), std::string::npos) << r.err;
    }
    auto file = roster::load_tuning(home.path + "/roster/tuning.json");
    ASSERT_TRUE(file) << file.error().message();
    EXPECT_EQ(file->records.size(), 1u);
    for (const auto& entry : std::filesystem::directory_iterator(home.path + "/roster"))
      EXPECT_EQ(read_text(entry.path().string()).find("warning"), std::string::npos) << entry.path();
  }
}

// Standard output that fails: a closed pipe (SIGPIPE ended the process, 141),
// a closed stream, a full disk, for --help, the report, the binding and bench.
TEST(Exit, FailedWritesToStandardOutputAreStatusFourWithTheReason) {
  temp_dir cache;
  const std::pair<const stream*, const char*> outs[] = {
      {&broken_pipe, "Broken pipe"}, {&closed, "Bad file descriptor"}, {&to_full, "No space left on device"}};
  for (const auto& [out, why] : outs)
    for (const auto& args : {std::vector<std::string>{"--help"}, std::vector<std::string>{},
                             std::vector<std::string>{"--json"}, std::vector<std::string>{"bind"},
                             bench_args({"bench", "--adapter", "toolfake:1"})}) {
      const std::string name = args.empty() ? "report" : args[0];
      auto r = run_to(args, *out, to_file, cache.path);
      EXPECT_EQ(r.status, roster::info::output_failed) << name << ", " << why << ": " << r.err;
      EXPECT_NE(r.err.find(std::string("could not be written to standard output: ") + why), std::string::npos)
          << name << ": " << r.err;
      EXPECT_NE(r.err.find("Fix: "), std::string::npos) << name << ": " << r.err;
    }
}

}  // namespace
