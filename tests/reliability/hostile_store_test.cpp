// Hostile cases of the tuning store (docs/hostile.md, from case 55): each
// test names its case.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/child.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using test_support::in_child;

struct temp_folder {
  std::string path;
  temp_folder() {
    std::string t = (fs::temp_directory_path() / "roster-hostile-store-XXXXXX").string();
    if (::mkdtemp(t.data()) != nullptr) path = t;
  }
  ~temp_folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

roster::tuning_record record(const std::string& device, double gbps = 10.0) {
  roster::tuning_record r;
  r.backend = "cpu";
  r.device = device;
  r.driver_version = "1";
  r.figures.push_back({roster::op::triad, roster::element_type::f64, gbps, 0.01});
  return r;
}

// Sets an environment variable for one scope (nullopt unsets it).
struct scoped_env {
  std::string name;
  std::optional<std::string> old;
  scoped_env(const char* n, std::optional<std::string> value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    if (value) ::setenv(n, value->c_str(), 1);
    else ::unsetenv(n);
  }
  ~scoped_env() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

// A field of /proc/self/status in bytes (VmHWM: the resident peak), or 0.
std::size_t status_bytes(const char* field) {
  std::size_t kb = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    const std::size_t n = std::strlen(field);
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::strtoull(line + n + 1, nullptr, 10);
    std::fclose(f);
  }
  return kb * 1024;
}

// Case 55: two caches whose tuning.json are links to one shared file. The
// lock was taken beside each link, so savers through the two links did not
// exclude each other and replaced each other's records.
TEST(HostileStore, SaversThroughTwoLinksToOneFileLoseNoRecord) {
  temp_folder dir;
  const std::string shared = dir.path + "/shared/tuning.json";
  fs::create_directories(dir.path + "/shared");
  ASSERT_TRUE(roster::save_tuning(shared, std::vector{record("seed")}));
  std::vector<std::string> links;
  for (const char* cache : {"/a", "/b"}) {
    fs::create_directories(dir.path + cache);
    links.push_back(dir.path + cache + "/tuning.json");
    ASSERT_EQ(::symlink("../shared/tuning.json", links.back().c_str()), 0);
  }
  constexpr int savers_per_link = 4, saves = 6;
  std::vector<std::thread> savers;
  std::vector<std::string> failures(2 * savers_per_link);
  for (int t = 0; t < 2 * savers_per_link; ++t)
    savers.emplace_back([&, t] {
      for (int i = 0; i < saves; ++i) {
        auto ok = roster::save_tuning(links[t % 2], std::vector{record("saver" + std::to_string(t) + "-" +
                                                                       std::to_string(i))});
        if (!ok) failures[t] = ok.error().message();
      }
    });
  for (auto& s : savers) s.join();
  for (const auto& f : failures) EXPECT_TRUE(f.empty()) << f;
  auto file = roster::load_tuning(shared);
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(file->records.size(), std::size_t{1 + 2 * savers_per_link * saves}) << "records were lost";
  // The links stay links; the lock is beside the file they lead to.
  for (const auto& link : links) {
    EXPECT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_FALSE(fs::exists(link + ".lock")) << "a lock beside the link: " << link;
  }
  EXPECT_TRUE(fs::exists(shared + ".lock"));
}

// Case 56: save_tuning wrote records the reader refuses (a spread of 250,
// NaN or -1, an empty backend), and the next read refused the whole file.
TEST(HostileStore, RecordsTheReaderWouldRefuseAreNotWritten) {
  temp_folder dir;
  const std::string path = dir.path + "/tuning.json";
  ASSERT_TRUE(roster::save_tuning(path, std::vector{record("kept")}));
  const std::string before = read_text(path);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<std::pair<std::string, roster::tuning_record>> bad;
  for (double spread : {250.0, nan, -1.0, 100.0}) {
    auto r = record("bad-spread");
    r.figures[0].spread = spread;
    r.figures.push_back({roster::op::copy, roster::element_type::f64, 5.0, 0.02});
    bad.emplace_back("spread " + std::to_string(spread), r);
  }
  auto empty_backend = record("empty-backend");
  empty_backend.backend.clear();
  bad.emplace_back("empty backend", empty_backend);
  bad.emplace_back("empty device", record(""));
  auto twice = record("twice");
  twice.figures.push_back(twice.figures[0]);
  bad.emplace_back("a figure twice", twice);
  auto shape = record("shape");
  shape.sync_shapes.push_back({"triad|dot", nan, 2.0, 0.0});
  bad.emplace_back("a NaN timing", shape);
  auto kernel = record("kernel");
  kernel.kernels.push_back({});
  kernel.kernels.back().op = "triad";
  kernel.kernels.back().variant = "v";
  kernel.kernels.back().variant_ns = inf;
  bad.emplace_back("an infinite kernel timing", kernel);
  for (const auto& [what, r] : bad) {
    auto saved = roster::save_tuning(path, std::vector{record("good"), r});
    ASSERT_FALSE(saved) << what << ": written, though the reader refuses it";
    EXPECT_EQ(saved.error().code(), roster::errc::invalid_argument) << saved.error().message();
    EXPECT_NE(saved.error().what().find("new record 1"), std::string::npos) << saved.error().message();
    expect_fix(saved.error());
    EXPECT_EQ(read_text(path), before) << what;
    auto loaded = roster::load_tuning(path);
    ASSERT_TRUE(loaded) << what << ": " << loaded.error().message();
    EXPECT_EQ(loaded->records.size(), 1u) << what;
  }
  // What the reader takes, the writer takes: a spread under 100 is written.
  auto fine = record("fine");
  fine.figures[0].spread = 99.5;
  ASSERT_TRUE(roster::save_tuning(path, std::vector{fine}));
  auto loaded = roster::load_tuning(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(loaded->records.size(), 2u);
}

// Case 57: a UTF-8 byte-order mark before the JSON (an editor saved it so)
// lost every record: "not valid JSON at byte 0".
TEST(HostileStore, AByteOrderMarkIsReadPast) {
  temp_folder dir;
  const std::string path = dir.path + "/tuning.json";
  roster::tuning_file file;
  file.records.push_back(record("bom"));
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF" << roster::to_json(file);
  auto loaded = roster::load_tuning(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->records.size(), 1u);
  EXPECT_EQ(loaded->records[0].device, "bom");
  // A save merges with it: no corrupt copy, both records kept.
  std::string kept;
  ASSERT_TRUE(roster::save_tuning(path, std::vector{record("second")}, &kept));
  EXPECT_TRUE(kept.empty()) << kept;
  loaded = roster::load_tuning(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_EQ(loaded->records.size(), 2u);
}

// Case 58: a tuning or site file of a gigabyte was read up to the 64 MiB cap,
// doubling its string (a peak of 261 MB), before it was refused. The size is
// checked first: the refusal reads nothing.
TEST(HostileStore, AFileOfAGigabyteIsRefusedBeforeItIsRead) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizers' shadow memory counts in the peak resident set";
#endif
  temp_folder dir;
  const std::string path = dir.path + "/tuning.json";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{1} << 30), 0);  // sparse: reads as zeros, takes no disk
  ::close(fd);
  const int status = in_child([&] {
    if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
      std::fputs("5", f);
      std::fclose(f);
    }
    const std::size_t before = status_bytes("VmHWM");
    auto loaded = roster::load_tuning(path);
    if (loaded) return 2;
    if (loaded.error().what().find("larger than 64 MiB") == std::string::npos ||
        loaded.error().fix().empty())
      return std::printf("%s\n", loaded.error().message().c_str()), 3;
    auto saved = roster::save_tuning(path, std::vector{record("x")});
    if (saved) return 4;
    ::setenv("ROSTER_TUNING_PATH", path.c_str(), 1);  // as a site file
    roster::reload_tuning();
    (void)roster::current_tuning();
    const std::size_t grown = status_bytes("VmHWM") - before;
    std::printf("peak grew by %zu KB\n", grown >> 10);
    return grown < (16u << 20) ? 0 : 1;
  });
  EXPECT_EQ(status, 0) << "1: the peak grew by 16 MB or more (the file was read); 2: it was read as a tuning "
                          "file; 3: the error does not say why; 4: the save replaced it";
  EXPECT_EQ(fs::file_size(path), std::uintmax_t{1} << 30);
}

// Case 59: HOME=rel, HOME=. and HOME='~' put the tuning file under the
// current folder without a word; a relative XDG_CACHE_HOME with HOME unset
// said "neither is set".
TEST(HostileStore, ARelativeHomeOrCacheHomeIsNotUsedAndIsSaid) {
  for (const char* home : {"rel", ".", "~", "~/x"}) {
    scoped_env xdg("XDG_CACHE_HOME", std::nullopt), h("HOME", home);
    auto path = roster::tuning_path();
    ASSERT_FALSE(path) << home << " gave " << *path;
    EXPECT_NE(path.error().what().find("HOME='" + std::string(home) + "' is not an absolute path"), std::string::npos)
        << path.error().message();
    expect_fix(path.error());
  }
  {
    scoped_env xdg("XDG_CACHE_HOME", "rel"), h("HOME", std::nullopt);
    auto path = roster::tuning_path();
    ASSERT_FALSE(path);
    EXPECT_NE(path.error().what().find("XDG_CACHE_HOME='rel' is not an absolute path"), std::string::npos)
        << path.error().message();
    EXPECT_NE(path.error().what().find("HOME is not set"), std::string::npos) << path.error().message();
    EXPECT_EQ(path.error().what().find("neither"), std::string::npos) << path.error().message();
  }
  {
    // A relative XDG_CACHE_HOME is ignored, as the XDG rules say, and said.
    scoped_env xdg("XDG_CACHE_HOME", "rel"), h("HOME", "/home/someone"), t("ROSTER_TUNING_PATH", std::nullopt);
    auto path = roster::tuning_path();
    ASSERT_TRUE(path) << path.error().message();
    EXPECT_EQ(*path, "/home/someone/.cache/roster/tuning.json");
    const auto warnings = roster::tuning_path_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].what().find("XDG_CACHE_HOME='rel' is not an absolute path, so it is ignored"),
              std::string::npos)
        << warnings[0].message();
    expect_fix(warnings[0]);
  }
  {
    // ROSTER_TUNING_PATH's "~/" with a relative HOME: that entry is skipped.
    scoped_env xdg("XDG_CACHE_HOME", "/tmp/x"), h("HOME", "."), t("ROSTER_TUNING_PATH", "~/site.json");
    const auto warnings = roster::tuning_path_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].what().find("HOME='.' is not an absolute path"), std::string::npos)
        << warnings[0].message();
  }
}

// Case 60: a save through /dev/stdout (which leads through /proc/self/fd/1
// to the file the shell opened with >>) renamed the new text over that file
// and made a lock beside it. A path through /dev or /proc is refused.
TEST(HostileStore, ASaveThroughDevStdoutReplacesNothing) {
  temp_folder dir;
  const std::string log = dir.path + "/run.log";
  std::ofstream(log) << "earlier output\n";
  struct stat before {};
  ASSERT_EQ(::stat(log.c_str(), &before), 0);
  const int status = in_child([&] {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::dup2(fd, 1) != 1) return 2;
    for (const char* path : {"/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"}) {
      auto saved = roster::save_tuning(path, std::vector{record("x")});
      if (saved) return 1;
      if (saved.error().what().find("under /dev or /proc") == std::string::npos || saved.error().fix().empty())
        return std::fprintf(stderr, "%s\n", saved.error().message().c_str()), 3;
    }
    return 0;
  });
  EXPECT_EQ(status, 0) << "1: the save went through; 3: the error does not say why";
  struct stat after {};
  ASSERT_EQ(::stat(log.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the log was replaced";
  EXPECT_EQ(read_text(log), "earlier output\n");
  for (const auto& e : fs::directory_iterator(dir.path)) EXPECT_EQ(e.path().filename(), "run.log") << e.path();
}

}  // namespace
