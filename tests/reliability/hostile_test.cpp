// Hostile cases of the library layer (docs/hostile.md): what a careless or
// unlucky caller does, and roster answers with an error carrying a Fix:
// instead of a crash, a silent empty machine or unbounded memory.
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

#include "../support/held_bytes.hpp"
#include "../support/identity_device.hpp"

#include <roster/detail/backend/plugin_check.hpp>

#include <roster/detail/base/file_io.hpp>

#include <dlfcn.h>
#include <grp.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

// Resident memory of this process in bytes.
// The process's memory (the resident set; under a sanitizer, its allocator's bytes).
std::size_t resident_bytes() { return roster_test::held_bytes(); }

// Case 3: a null host pointer with a non-zero count was passed to the backend,
// which wrote through it (SIGSEGV).
TEST(Hostile, NullHostPointerIsAnError) {
  auto d = roster::get_device("cpu");
  ASSERT_TRUE(d) << d.error().message();
  auto b = (*d)->allocate<float>(16);
  ASSERT_TRUE(b) << b.error().message();
  auto up = (*d)->upload_raw(*b, roster::element_type::f32, nullptr, 16);
  ASSERT_FALSE(up);
  EXPECT_NE(up.error().message().find("null"), std::string::npos) << up.error().message();
  expect_fix(up.error());
  auto down = (*d)->download_raw(*b, roster::element_type::f32, nullptr, 16);
  ASSERT_FALSE(down);
  EXPECT_NE(down.error().message().find("null"), std::string::npos) << down.error().message();
  expect_fix(down.error());
  // A span built from a null pointer goes the same way.
  EXPECT_FALSE((*d)->upload(*b, std::span<const float>(static_cast<const float*>(nullptr), 16)));
  EXPECT_TRUE((*d)->release(*b));
}

// Case 8: an ordinal of 11 or more digits was read as a UUID prefix, which no
// adapter has: the selector emptied the machine without a word.
TEST(Hostile, LongOrdinalIsAnErrorNamingTheTerm) {
  for (const char* text : {"cpu:99999999999", "cpu:00000000000", "!cpu:123456789012345678901234"}) {
    auto s = roster::parse_selector(text);
    ASSERT_FALSE(s) << text << " parsed into " << s->terms.size() << " terms";
    EXPECT_NE(s.error().message().find(std::string("term '") + text + "'"), std::string::npos)
        << s.error().message();
    EXPECT_NE(s.error().message().find("more than 10 digits"), std::string::npos) << s.error().message();
    expect_fix(s.error());
  }
  // Ten digits stay an ordinal; a UUID prefix of digits is written GPU-...
  auto ten = roster::parse_selector("cpu:0000000000");
  ASSERT_TRUE(ten) << ten.error().message();
  EXPECT_EQ(ten->terms.at(0).what, roster::selector_what::ordinal);
  auto uuid = roster::parse_selector("cpu:GPU-99999999999");
  ASSERT_TRUE(uuid) << uuid.error().message();
  EXPECT_EQ(uuid->terms.at(0).what, roster::selector_what::uuid_prefix);
}

// Case 10: when a plugin stayed mapped after dlclose (another handle held it),
// unload_plugin returned an error but dropped it from loaded_plugins(), so
// roster could never unload it again.
TEST(Hostile, PluginThatStaysLoadedStaysListed) {
  auto p = roster::load_plugin(ROSTER_STRESS_PLUGIN);
  ASSERT_TRUE(p) << p.error().message();
  void* other = dlopen(ROSTER_STRESS_PLUGIN, RTLD_NOW | RTLD_LOCAL);  // the user's own handle
  ASSERT_NE(other, nullptr) << dlerror();
  auto listed = [&] {
    for (const auto& q : roster::loaded_plugins())
      if (q.path == p->path) return true;
    return false;
  };
  auto first = roster::unload_plugin(*p);
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message().find("stays loaded"), std::string::npos) << first.error().message();
  expect_fix(first.error());
  EXPECT_TRUE(listed()) << "a plugin still mapped left loaded_plugins()";
  // Once the other handle is gone, roster unloads it for good.
  ASSERT_EQ(dlclose(other), 0);
  std::vector<roster::plugin> now = roster::loaded_plugins();
  ASSERT_EQ(now.size(), 1u);
  auto second = roster::unload_plugin(now[0]);
  EXPECT_TRUE(second) << second.error().message();
  EXPECT_FALSE(listed());
  EXPECT_EQ(dlopen(ROSTER_STRESS_PLUGIN, RTLD_LAZY | RTLD_NOLOAD), nullptr);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct temp_folder {
  std::string path;
  temp_folder() {
    char buf[] = "/tmp/roster-hostile-XXXXXX";
    path = ::mkdtemp(buf);
  }
  ~temp_folder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Case 4: ROSTER_PLUGIN_PATH dlopened every *.so: a copy of libasan.so ended
// the process with exit 1 from its start-up code, and a copy of libm.so.6 was
// accepted as a plugin. Now the file is read first and only a roster plugin
// of this plugin ABI is opened; each refusal is kept with its reason.
TEST(Hostile, PluginFolderOfStrangersIsRefusedBeforeDlopen) {
  temp_folder folder;
  namespace fs = std::filesystem;
  fs::copy_file("/lib/x86_64-linux-gnu/libm.so.6", folder.path + "/libm.so");
  const bool asan = fs::exists("/usr/lib/x86_64-linux-gnu/libasan.so.8");
  if (asan) fs::copy_file("/usr/lib/x86_64-linux-gnu/libasan.so.8", folder.path + "/libasan.so");
  std::ofstream(folder.path + "/libempty.so") << "";
  // In a child: before, dlopen of libasan.so ended the process.
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto r = roster::load_plugins(folder.path);
    const auto refused = roster::refused_plugins();
    std::size_t strangers = 0;
    for (const auto& e : refused)
      if (e.what().find("is not a roster plugin") != std::string::npos) ++strangers;
    ::_exit(!r && roster::loaded_plugins().empty() && strangers == (asan ? 3u : 2u) ? 0 : 10);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a library's start-up code ended the host; 10: not every file refused";

  auto r = roster::load_plugins(folder.path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("is not a roster plugin"), std::string::npos) << r.error().message();
  expect_fix(r.error());
  EXPECT_TRUE(roster::loaded_plugins().empty());
  bool libm_named = false;
  for (const auto& e : roster::refused_plugins()) {
    expect_fix(e);
    if (e.what().find("libm.so' is not a roster plugin: it has no roster_plugin_abi section") != std::string::npos)
      libm_named = true;
  }
  EXPECT_TRUE(libm_named);
}

TEST(Hostile, PluginOfAnotherAbiIsRefused) {
  auto mark = roster::detail::check_plugin_file(ROSTER_STRESS_PLUGIN);
  ASSERT_TRUE(mark) << mark.error().message();
  EXPECT_EQ(*mark, roster::detail::plugin_abi_version);
  // The same plugin with its note saying ABI 99.
  std::string bytes = read_file(ROSTER_STRESS_PLUGIN);
  const std::string magic(roster::detail::plugin_note_magic, 8);
  std::size_t notes = 0;
  for (std::size_t at = bytes.find(magic); at != std::string::npos; at = bytes.find(magic, at + 8)) {
    bytes[at + 8] = 99;
    ++notes;
  }
  ASSERT_GE(notes, 1u);
  temp_folder folder;
  const std::string copy = folder.path + "/libold.so";
  std::ofstream(copy, std::ios::binary) << bytes;
  auto p = roster::load_plugin(copy);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), roster::errc::unsupported);
  EXPECT_NE(p.error().what().find("built for roster plugin ABI 99"), std::string::npos) << p.error().message();
  expect_fix(p.error());
  EXPECT_TRUE(roster::loaded_plugins().empty());
}

// The recogniser on hand-made ELF files (fuzz/corpus and fuzz/regressions of
// plugin_file): the smallest plugin is accepted, each malformed one refused.
// The corpus plugins say plugin ABI 2: as they are, they are refused (ABI 2
// is older than this roster's); with their notes set to this roster's ABI,
// accepted.
TEST(Hostile, RecogniserVerdictsOnCraftedFiles) {
  const std::string fuzz = ROSTER_FUZZ_DIR;
  temp_folder folder;
  const auto as_this_abi = [&](const std::string& file) {
    std::string bytes = read_file(fuzz + "/corpus/plugin_file/" + file);
    const std::string magic(roster::detail::plugin_note_magic, 8);
    for (std::size_t at = bytes.find(magic); at != std::string::npos; at = bytes.find(magic, at + 8))
      std::memcpy(&bytes[at + 8], &roster::detail::plugin_abi_version, sizeof(std::uint32_t));
    const std::string copy = folder.path + "/" + file;
    std::ofstream(copy, std::ios::binary) << bytes;
    return copy;
  };
  auto ok = roster::detail::check_plugin_file(as_this_abi("plugin-abi-2.so"));
  EXPECT_TRUE(ok) << ok.error().message();
  ok = roster::detail::check_plugin_file(as_this_abi("two-notes.so"));
  EXPECT_TRUE(ok) << ok.error().message();
  const std::pair<const char*, const char*> refused[] = {
      {"corpus/plugin_file/plugin-abi-2.so", "built for roster plugin ABI 2"},
      {"corpus/plugin_file/two-notes.so", "built for roster plugin ABI 2"},
      {"corpus/plugin_file/no-note.so", "it has no roster_plugin_abi section"},
      {"corpus/plugin_file/not-elf.so", "not an ELF file"},
      {"regressions/plugin_file/abi-99.so", "built for roster plugin ABI 99"},
      {"regressions/plugin_file/section-headers-past-end.so", "past the end of the file"},
      {"regressions/plugin_file/names-index-out-of-range.so", "no section name table"},
      {"regressions/plugin_file/name-offset-past-table.so", "no roster_plugin_abi section"},
      {"regressions/plugin_file/truncated.so", "past the end of the file"},
      {"regressions/plugin_file/executable-not-shared.so", "not a shared object"},
      {"regressions/plugin_file/other-machine.so", "for another machine"},
      {"regressions/plugin_file/note-nobits.so", "section is malformed"},
      {"regressions/plugin_file/bad-magic.so", "section is malformed"}};
  for (const auto& [file, why] : refused) {
    auto r = roster::detail::check_plugin_file(fuzz + "/" + file);
    ASSERT_FALSE(r) << file;
    EXPECT_NE(r.error().what().find(why), std::string::npos) << file << ": " << r.error().message();
    expect_fix(r.error());
  }
}

// Case 12: every new spec copied the whole cache table and no table was ever
// freed: memory grew with the square of the distinct specs (1,500 specs:
// hundreds of MB), and every rescan() copied it once more.
TEST(Hostile, DeviceCacheMemoryIsLinearAndRescanFree) {
  constexpr int specs = 1500;
  const std::size_t before = resident_bytes();
  for (int i = 1; i <= specs; ++i) {
    auto d = roster::get_device("cpu:" + std::to_string(i));
    ASSERT_FALSE(d) << "cpu:" << i << " opened";  // one CPU adapter: each is a cached failure
  }
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  // A slot, its error and a few table entries: well under 16 KiB a spec.
  EXPECT_LT(grown, std::size_t{specs} * 16384u) << grown / specs << " bytes per spec";
  std::printf("%d specs: %zu bytes resident more (%zu a spec)\n", specs, grown, grown / specs);
  // Every spec failed: the first rescan clears each failed slot in place.
  // Then none is left failed, so the rescans after it change nothing.
  roster::rescan();
  const std::size_t settled = resident_bytes();
  for (int i = 0; i < 300; ++i) roster::rescan();
  const std::size_t after = resident_bytes();
  EXPECT_LT(after - std::min(settled, after), std::size_t{4} << 20) << "300 rescans grew resident memory";
}

// Case 69: rescan() swapped each failed slot for a fresh one and kept the
// old for good, so retrying a failing spec after each rescan leaked: 40,000
// cycles grew 11 MB for cpu:7 and 27 MB for nosuch:0; 10,000 failing specs
// and 100 rescans, 305 MB. A failed slot is now cleared in place: memory is
// bounded by the specs asked for.
TEST(Hostile, RetryingAFailingSpecAcrossRescansHoldsNoMoreMemory) {
  for (const char* spec : {"cpu:7", "nosuch:0"}) {
    auto cycle = [&] {
      ASSERT_FALSE(roster::get_device(spec)) << spec << " opened";
      roster::rescan();
    };
    for (int i = 0; i < 500; ++i) cycle();  // warm: the allocator's pools
    const std::size_t before = resident_bytes();
    constexpr int cycles = 20000;
    for (int i = 0; i < cycles; ++i) cycle();
    const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
    std::printf("%s: %d cycles of get_device and rescan: %zu bytes more\n", spec, cycles, grown);
    EXPECT_LT(grown, std::size_t{2} << 20) << spec << ": " << grown / cycles << " bytes a cycle";
  }
  // Many failing specs, each retried after every rescan.
  std::vector<std::string> specs;
  for (int i = 100; i < 1100; ++i) specs.push_back("cpu:" + std::to_string(i));
  for (const auto& s : specs) ASSERT_FALSE(roster::get_device(s));
  roster::rescan();
  const std::size_t before = resident_bytes();
  for (int round = 0; round < 100; ++round) {
    for (const auto& s : specs) ASSERT_FALSE(roster::get_device(s));
    roster::rescan();
  }
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  std::printf("1,000 failing specs, 100 rescans: %zu bytes more\n", grown);
  EXPECT_LT(grown, std::size_t{4} << 20);
  // A rescan still retries: a spec whose open failed is cached as failed,
  // and opens once its backend can and rescan() ran.
  static std::atomic<bool> refuse{true};
  ASSERT_TRUE(roster::register_factory(
      "test_registry_backend_flaky",
      [](std::uint32_t) -> roster::expected<std::unique_ptr<roster::device>> {
        if (refuse) return roster::make_error(roster::errc::unavailable, "flaky: not yet", "wait");
        roster::adapter_info a;
        a.backend = "test_registry_backend_flaky";
        return std::unique_ptr<roster::device>(std::make_unique<roster_test_support::identity_device>(a));
      },
      nullptr));
  ASSERT_FALSE(roster::get_device("test_registry_backend_flaky:0"));
  refuse = false;
  EXPECT_FALSE(roster::get_device("test_registry_backend_flaky:0")) << "the failure was not cached";
  roster::rescan();
  auto opened = roster::get_device("test_registry_backend_flaky:0");
  EXPECT_TRUE(opened) << opened.error().message();
}

// Case 35: each rescan() then circuits() kept one more snapshot of the
// circuits (about 1 KB) for the process, the machine unchanged or not. A
// published snapshot still stays for the process (its spans are promised
// valid), but a scan that finds what the current one holds publishes
// nothing: 20,000 rescans of the same machine keep the same snapshot and
// grow resident memory by well under 1 MB. A rescan that changes something
// keeps one more (the bound docs/hostile.md states).
TEST(Hostile, RescanOfAnUnchangedMachineKeepsNoNewSnapshot) {
  auto first = roster::circuits();
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_FALSE(first->empty());
  const roster::circuit* same = first->data();
  for (int i = 0; i < 200; ++i) {  // warm: the allocator's pools, the trace's capacity
    roster::rescan();
    ASSERT_TRUE(roster::circuits());
  }
  const std::size_t before = resident_bytes();
  constexpr int rescans = 20000;
  for (int i = 0; i < rescans; ++i) {
    roster::rescan();
    auto cs = roster::circuits();
    ASSERT_TRUE(cs) << cs.error().message();
    ASSERT_EQ(cs->data(), same) << "rescan " << i << " published a new snapshot of an unchanged machine";
  }
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  std::printf("%d rescans: %zu bytes resident more (%zu a rescan)\n", rescans, grown, grown / rescans);
  EXPECT_LT(grown, std::size_t{1} << 20) << grown / rescans << " bytes a rescan";
  // Whatever a later scan publishes, the first span stays readable.
  ::setenv("ROSTER_DEVICE_SELECTOR", "!nonesuch:*", 1);
  roster::rescan();
  auto changed = roster::circuits();
  ::unsetenv("ROSTER_DEVICE_SELECTOR");
  roster::rescan();
  ASSERT_TRUE(changed) << changed.error().message();
  EXPECT_EQ(first->front().adapter.spec(), changed->front().adapter.spec());
}

// The tuning-file cases (1, 5, 6, 11) point XDG_CACHE_HOME at a folder of
// their own for one test and put it back after.
struct cache_home {
  std::optional<std::string> old;
  explicit cache_home(const std::string& path) {
    if (const char* v = std::getenv("XDG_CACHE_HOME")) old = v;
    ::setenv("XDG_CACHE_HOME", path.c_str(), 1);
    roster::reload_tuning();
  }
  ~cache_home() {
    if (old) ::setenv("XDG_CACHE_HOME", old->c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
    roster::reload_tuning();
  }
};

roster::tuning_record sample_record(const std::string& device, double triad) {
  roster::tuning_record r;
  r.backend = "cpu";
  r.device = device;
  r.driver_version = "1";
  r.figures.push_back({roster::op::triad, roster::element_type::f64, triad});
  return r;
}

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// Case 1: a FIFO where the tuning file should be: open without O_NONBLOCK
// waited forever for a writer, in acquire("cpu") and every read. The run is a
// child under alarm(), so the old hang is a failure, not a stuck suite.
TEST(Hostile, FifoForTuningFileNeitherHangsNorIsReplaced) {
  temp_folder cache;
  std::filesystem::create_directories(cache.path + "/roster");
  const std::string path = cache.path + "/roster/tuning.json";
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(20);
    ::setenv("XDG_CACHE_HOME", cache.path.c_str(), 1);
    // One CPU thread: the child of a multi-threaded process starts no thread
    // (ThreadSanitizer stops a child that does).
    ::setenv("ROSTER_CPU_THREADS", "1", 1);
    roster::reload_tuning();
    auto d = roster::acquire("cpu");
    const bool ok = d.has_value() && roster::current_tuning().empty() && !roster::load_tuning(path);
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "acquire(\"cpu\") hung on the FIFO (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto loaded = roster::load_tuning(path);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message().find(path + " is a FIFO, not a regular file"), std::string::npos)
      << loaded.error().message();
  expect_fix(loaded.error());
  auto saved = roster::save_tuning(path, std::vector{sample_record("a", 1.0)});
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().message().find("it is not replaced"), std::string::npos) << saved.error().message();
  EXPECT_TRUE(is_fifo(path));
}

// Case 1, the lock: a FIFO as the lock file is refused, and a lock that some
// other process keeps is waited for a bounded time, then an error.
TEST(Hostile, TuningLockIsARegularFileAndItsWaitIsBounded) {
  temp_folder cache;
  const std::string path = cache.path + "/tuning.json";
  ASSERT_EQ(::mkfifo((path + ".lock").c_str(), 0644), 0);
  auto saved = roster::save_tuning(path, std::vector{sample_record("a", 1.0)});
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().message().find(path + ".lock is a FIFO, not a regular file"), std::string::npos)
      << saved.error().message();
  expect_fix(saved.error());
  EXPECT_FALSE(std::filesystem::exists(path));
  ASSERT_EQ(::unlink((path + ".lock").c_str()), 0);
  // Another holder keeps the lock: the wait ends.
  const int fd = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const auto start = std::chrono::steady_clock::now();
  roster::detail::file_lock lock(path, std::chrono::milliseconds(300));
  EXPECT_FALSE(lock.held());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const auto e = lock.failure("tuning file");
  EXPECT_NE(e.value.message().find("still locked by another writer"), std::string::npos) << e.value.message();
  ::close(fd);
  roster::detail::file_lock free_now(path, std::chrono::milliseconds(300));
  EXPECT_TRUE(free_now.held());
}

// Case 5: a file that could not be read was taken as corrupt and replaced:
// records lost, mode 0644. A corrupt file lost its valid records.
TEST(Hostile, UnreadableTuningFileIsKeptCorruptOneSetAsideModeKept) {
  temp_folder cache;
  const std::string path = cache.path + "/tuning.json";
  ASSERT_TRUE(roster::save_tuning(path, std::vector{sample_record("kept", 1.0)}));
  const std::string before = read_file(path);
  // Root reads a file of mode 000: as root, the save runs in a child as
  // nobody, in a folder nobody owns.
  if (::geteuid() == 0) {
    for (const auto& p : {cache.path, path, path + ".lock"}) ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
  }
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    auto saved = roster::save_tuning(path, std::vector{sample_record("new", 2.0)});
    if (saved) ::_exit(1);  // it replaced a file it could not read
    if (saved.error().message().find("Permission denied; it is not replaced") == std::string::npos ||
        saved.error().fix().empty()) {
      std::fprintf(stderr, "%s\n", saved.error().message().c_str());
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: replaced, 2: wrong message, 3: could not become nobody";
  {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0u);
  }
  // The mode is kept on replace.
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(read_file(path), before);
  ASSERT_TRUE(roster::save_tuning(path, std::vector{sample_record("new", 2.0)}));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  auto both = roster::load_tuning(path);
  ASSERT_TRUE(both) << both.error().message();
  EXPECT_EQ(both->records.size(), 2u);
  // A corrupt file (its second record is not valid) is kept beside the new
  // one, and its valid record is carried over.
  const std::string corrupt =
      "{\"format\": \"roster-tuning\", \"version\": 1, \"records\": [{\"backend\": \"cpu\", \"device\": \"old\", "
      "\"driver\": \"1\", \"gbps\": {\"double\": {\"triad\": 5}}}, {\"backend\": \"cpu\"}]}\n";
  {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupt;
  }
  ASSERT_FALSE(roster::load_tuning(path));
  std::string kept;
  ASSERT_TRUE(roster::save_tuning(path, std::vector{sample_record("new", 3.0)}, &kept));
  ASSERT_EQ(kept.rfind(path + ".corrupt-", 0), 0u) << kept;
  EXPECT_EQ(read_file(kept), corrupt);
  auto merged = roster::load_tuning(path);
  ASSERT_TRUE(merged) << merged.error().message();
  ASSERT_EQ(merged->records.size(), 2u);
  EXPECT_EQ(merged->records[0].device, "old");
  EXPECT_EQ(merged->records[1].device, "new");
}

// Case 6: kill -9 between mkstemp and rename left tuning.json.XXXXXX files
// that nothing removed. A later write removes the stale ones (old, with
// roster's temporary name, regular files) and nothing else: not a user's
// tuning.json.backup, which the first fix (any tuning.json. + six letters or
// digits) deleted.
TEST(Hostile, StaleTuningTempFilesAreRemoved) {
  temp_folder cache;
  const std::string path = cache.path + "/tuning.json";
  auto make = [&](const std::string& name, bool old) {
    std::ofstream(cache.path + "/" + name) << "partial";
    if (old) {
      const timespec times[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
      ::utimensat(AT_FDCWD, (cache.path + "/" + name).c_str(), times, 0);
    }
  };
  EXPECT_EQ(roster::detail::temp_stem(path), cache.path + "/.roster-tmp-tuning.json.");
  make(".roster-tmp-tuning.json.aB3xYz", true);    // stale: removed
  make(".roster-tmp-tuning.json.Qw12er", false);   // fresh: a writer may still own it
  make("tuning.json.backup", true);                // the user's: six letters, kept
  make("tuning.json.before", true);                // the user's
  make("tuning.json.aB3xYz", true);                // not roster's name
  make("tuning.json.corrupt-1", true);             // not the pattern
  make(".roster-tmp-tuning.json.ab", true);        // not the pattern
  make(".roster-tmp-other.json.aB3xYz", true);     // another file's
  ASSERT_EQ(::symlink((cache.path + "/tuning.json.backup").c_str(),
                      (cache.path + "/.roster-tmp-tuning.json.LnK000").c_str()),
            0);
  ASSERT_TRUE(roster::save_tuning(path, std::vector{sample_record("a", 1.0)}));
  EXPECT_FALSE(std::filesystem::exists(cache.path + "/.roster-tmp-tuning.json.aB3xYz"));
  for (const char* kept : {".roster-tmp-tuning.json.Qw12er", "tuning.json.backup", "tuning.json.before",
                           "tuning.json.aB3xYz", "tuning.json.corrupt-1", ".roster-tmp-tuning.json.ab",
                           ".roster-tmp-other.json.aB3xYz"})
    EXPECT_TRUE(std::filesystem::exists(cache.path + "/" + kept)) << kept;
  EXPECT_TRUE(std::filesystem::is_symlink(cache.path + "/.roster-tmp-tuning.json.LnK000"));
  EXPECT_EQ(read_file(cache.path + "/tuning.json.backup"), "partial");
  EXPECT_TRUE(roster::load_tuning(path));
  // The save left no temporary file of its own.
  std::size_t temps = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache.path))
    temps += e.path().filename().string().starts_with(".roster-tmp-tuning.json.") ? 1 : 0;
  EXPECT_EQ(temps, 3u);  // Qw12er, ab, LnK000
}

// Case 11: current_tuning() returned a span into records that reload_tuning()
// freed: a span held across a reload, or on another thread, read freed memory.
TEST(Hostile, TuningSpanSurvivesReload) {
  temp_folder cache;
  cache_home home(cache.path);
  ASSERT_TRUE(roster::save_tuning(cache.path + "/roster/tuning.json", std::vector{sample_record("first", 1.0)}));
  roster::reload_tuning();
  const auto held = roster::current_tuning();
  ASSERT_EQ(held.size(), 1u);
  ASSERT_TRUE(roster::save_tuning(cache.path + "/roster/tuning.json", std::vector{sample_record("second", 2.0)}));
  roster::reload_tuning();
  EXPECT_EQ(roster::current_tuning().size(), 2u);
  // The span from before the reload still reads the records it had.
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].device, "first");
  EXPECT_EQ(held[0].backend, "cpu");
}

// Case 11 on threads (run under TSan in CI): reload_tuning() on one thread
// while others acquire and read records.
TEST(Hostile, ReloadTuningRacesAcquire) {
  temp_folder cache;
  cache_home home(cache.path);
  roster::adapter_info a;
  a.backend = "cpu";
  a.name = "racer";
  a.driver_version = "1";
  ASSERT_TRUE(roster::save_tuning(cache.path + "/roster/tuning.json",
                                  std::vector{sample_record(roster::tuning_device_key(a), 7.0)}));
  roster::reload_tuning();
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::thread reloader([&] {
    while (!stop.load()) roster::reload_tuning();
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto d = roster::acquire("cpu");
        if (!d) ++wrong;
        auto records = roster::current_tuning();
        for (const auto& r : records)
          if (r.device != roster::tuning_device_key(a)) ++wrong;
        auto bw = roster::triad_bandwidth(a);
        if (!bw || *bw != 7.0) ++wrong;
      }
    });
  for (auto& r : readers) r.join();
  stop = true;
  reloader.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
