// Hostile cases of ROSTER_PLUGIN_PATH and its folders (docs/hostile.md): a
// plugin built against an older roster, a file named where a folder belongs,
// a folder that cannot be opened, links that lead nowhere, and more refusals
// than are kept. Each is a refusal with its reason and a Fix, never silence.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <roster/detail/backend/plugin_check.hpp>
#include <roster/detail/backend/plugin_refusals.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace {

namespace fs = std::filesystem;

struct temp_folder {
  std::string path;
  temp_folder() {
    char buf[] = "/tmp/roster-plugin-path-XXXXXX";
    path = ::mkdtemp(buf);
  }
  ~temp_folder() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

// The refusal whose message holds `what`, or nothing.
std::optional<roster::error> refusal_with(const std::string& what) {
  for (const auto& e : roster::refused_plugins())
    if (e.what().find(what) != std::string::npos) return e;
  return std::nullopt;
}

// Runs `body` in a child process (its own copy of the refusal list, its own
// user) and returns what it wrote; "exit N" / "signal N" when it did not end well.
std::string in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::string out = body();
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) ::_exit(3);
      done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "exit " + std::to_string(WEXITSTATUS(status));
  return out;
}

// A plugin built against an older roster (plugin ABI 2, before the headers a
// plugin includes changed) passed the ABI check and then crashed roster-info
// (free(): invalid pointer). plugin_abi_version moved on: it is refused before dlopen.
TEST(HostilePluginPath, PluginOfAnOlderRosterIsRefused) {
  EXPECT_GT(roster::detail::plugin_abi_version, 2u);
  auto old = roster::detail::check_plugin_file(std::string(ROSTER_FUZZ_DIR) + "/corpus/plugin_file/plugin-abi-2.so");
  ASSERT_FALSE(old) << "a plugin of ABI 2 is taken for one of this roster";
  EXPECT_EQ(old.error().code(), roster::errc::unsupported);
  EXPECT_NE(old.error().what().find("built for roster plugin ABI 2, and this roster speaks ABI " +
                                    std::to_string(roster::detail::plugin_abi_version)),
            std::string::npos)
      << old.error().message();
  expect_fix(old.error());
}

// ROSTER_PLUGIN_PATH naming a plugin file was reported as a folder that does
// not exist, with the Fix "create the folder". Now it says it is a file and
// how to name its folder (or load the one file).
TEST(HostilePluginPath, FileNamedAsAPluginFolderIsSaidToBeAFile) {
  temp_folder folder;
  const std::string file = folder.path + "/libtoy.so";
  std::ofstream(file) << "a plugin file";
  auto r = roster::load_plugins(file);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what().find("does not exist"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().what().find("plugin folder '" + file + "' is a file, not a folder"), std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().fix().find("name the folder that holds the plugin"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().fix().find("roster::load_plugin('" + file + "')"), std::string::npos) << r.error().message();
  EXPECT_TRUE(refusal_with("plugin folder '" + file + "' is a file"));

  // A path through the file: reached no further, with the errno, not "does not exist".
  auto through = roster::load_plugins(file + "/plugins");
  ASSERT_FALSE(through);
  EXPECT_NE(through.error().what().find("cannot be reached: " + std::string(std::strerror(ENOTDIR))),
            std::string::npos)
      << through.error().message();
  expect_fix(through.error());

  // A FIFO is no folder either (and nothing hangs on it).
  const std::string fifo = folder.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pipe = roster::load_plugins(fifo);
  ASSERT_FALSE(pipe);
  EXPECT_NE(pipe.error().what().find("is a device, FIFO or socket, not a folder"), std::string::npos)
      << pipe.error().message();
  expect_fix(pipe.error());
  EXPECT_TRUE(roster::loaded_plugins().empty());
}

// A plugin folder that exists but could not be opened (opendir failed with
// EACCES) gave no plugins and no word. Now it is refused, with the errno and
// a Fix. Root opens any folder, so the child drops to uid 65534 first.
TEST(HostilePluginPath, FolderThatCannotBeOpenedIsRefused) {
  temp_folder folder;
  std::ofstream(folder.path + "/libtoy.so") << "a plugin file";
  ASSERT_EQ(::chmod(folder.path.c_str(), 0300), 0);  // no read: not listable by its owner
  const std::string out = in_child([&]() -> std::string {
    if (::geteuid() == 0 && (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0))
      return "skip: could not drop root to uid 65534: " + std::string(std::strerror(errno));
    auto r = roster::load_plugins(folder.path);
    if (r) return "loaded, " + std::to_string(r->size()) + " plugins";
    const bool kept = refusal_with("plugin folder '" + folder.path + "' cannot be opened").has_value();
    return r.error().message() + (kept ? "\n[kept]" : "\n[not kept in refused_plugins()]");
  });
  if (out.starts_with("skip: ")) GTEST_SKIP() << out;
  EXPECT_NE(out.find("plugin folder '" + folder.path + "' cannot be opened: " + std::strerror(EACCES)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nFix: make it readable and searchable by this user (chmod u+rx '" + folder.path + "')"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[kept]"), std::string::npos) << out;
}

// A link to nothing and a loop of links named *.so in a plugin folder were
// passed over without a word. Now each is a refusal naming it, with a Fix.
TEST(HostilePluginPath, BrokenLinksAndLoopsAreRefused) {
  temp_folder folder;
  const std::string dangling = folder.path + "/libdangling.so", loop = folder.path + "/libloop.so";
  ASSERT_EQ(::symlink("/nonexistent/libgone.so", dangling.c_str()), 0);
  ASSERT_EQ(::symlink("libloop.so", loop.c_str()), 0);
  fs::create_directory(folder.path + "/libfolder.so");  // a folder named like a plugin: no plugin file, no word
  auto r = roster::load_plugins(folder.path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what().find("plugin '" + dangling + "' is a link to nothing ('/nonexistent/libgone.so')"),
            std::string::npos)
      << r.error().message();  // the first in name order
  // The user made the link: the Fix does not tell to remove it (case 73).
  EXPECT_EQ(r.error().fix().find("rm '"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().fix().find("leave its folder out of ROSTER_PLUGIN_PATH"), std::string::npos)
      << r.error().message();
  auto looped = refusal_with("plugin '" + loop + "' is a loop of links ('libloop.so'): " + std::strerror(ELOOP));
  ASSERT_TRUE(looped) << "the loop of links was passed over";
  expect_fix(*looped);
  EXPECT_FALSE(refusal_with("libfolder.so"));
  EXPECT_TRUE(roster::loaded_plugins().empty());
}

// Refusals were capped at 1024 without a word: the 1025th on vanished. Now a
// last entry says how many more were refused.
TEST(HostilePluginPath, RefusalsPastTheCapAreCounted) {
  temp_folder folder;
  const std::size_t files = roster::detail::refused_plugin_cap + 30;
  for (std::size_t i = 0; i < files; ++i)
    std::ofstream(folder.path + "/lib" + std::to_string(10000 + i) + ".so") << "not a plugin";
  const std::string out = in_child([&]() -> std::string {
    const std::size_t before = roster::refused_plugins().size();
    (void)roster::load_plugins(folder.path);
    const auto all = roster::refused_plugins();
    return "before " + std::to_string(before) + ", now " + std::to_string(all.size()) + "\n" + all.back().message();
  });
  const auto before = std::stoul(out.substr(out.find("before ") + 7));
  ASSERT_LE(before, roster::detail::refused_plugin_cap) << out;
  const std::size_t more = before + files - roster::detail::refused_plugin_cap;
  EXPECT_NE(out.find("now " + std::to_string(roster::detail::refused_plugin_cap + 1) + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("and " + std::to_string(more) + " more plugin files (or folders) were refused; only the first " +
                     std::to_string(roster::detail::refused_plugin_cap) + " refusals are kept\nFix: "),
            std::string::npos)
      << out;
}

}  // namespace
