// Hostile cases of the library layer (docs/hostile.md): what a careless or
// unlucky caller does, and roster answers with an error carrying a Fix:
// instead of a crash, a silent empty machine or unbounded memory.
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

#include <roster/detail/plugin_check-inl.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

// Resident memory of this process in bytes.
std::size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<std::size_t>(resident) * 4096u;
}

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
TEST(Hostile, RecogniserVerdictsOnCraftedFiles) {
  const std::string fuzz = ROSTER_FUZZ_DIR;
  auto ok = roster::detail::check_plugin_file(fuzz + "/corpus/plugin_file/plugin-abi-1.so");
  EXPECT_TRUE(ok) << ok.error().message();
  ok = roster::detail::check_plugin_file(fuzz + "/corpus/plugin_file/two-notes.so");
  EXPECT_TRUE(ok) << ok.error().message();
  const std::pair<const char*, const char*> refused[] = {
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
  // No spec failed since the last rescan's retry... but every one did: the
  // first rescan swaps each failed slot for a fresh one. Then none is left
  // failed, so the rescans after it change nothing.
  roster::rescan();
  const std::size_t settled = resident_bytes();
  for (int i = 0; i < 300; ++i) roster::rescan();
  const std::size_t after = resident_bytes();
  EXPECT_LT(after - std::min(settled, after), std::size_t{4} << 20) << "300 rescans grew resident memory";
}

}  // namespace
