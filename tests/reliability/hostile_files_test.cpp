// Hostile cases of roster's files (docs/hostile.md): every path roster opens
// through detail/base/file_io.hpp follows the same rules (no blocking on a FIFO,
// no link followed to create a file), and an error names the part of the
// path at fault with a Fix that fits it.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/child.hpp"

#include <roster/detail/base/file_io.hpp>

#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct temp_folder {
  std::string path;
  temp_folder() {
    char buf[] = "/tmp/roster-files-XXXXXX";
    path = ::mkdtemp(buf);
  }
  ~temp_folder() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

roster::tuning_record sample_record() {
  roster::tuning_record r;
  r.backend = "cpu";
  r.device = "files-test";
  r.driver_version = "1";
  r.figures.push_back({roster::op::triad, roster::element_type::f64, 1.0});
  return r;
}

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

// The lock was opened with O_CREAT, which follows a link: a link there to a
// file that does not exist made roster create that file, wherever it was.
TEST(HostileFiles, LockThatIsALinkToNowhereCreatesNothing) {
  temp_folder cache, elsewhere;
  const std::string path = cache.path + "/tuning.json", target = elsewhere.path + "/created-through-a-link";
  ASSERT_EQ(::symlink(target.c_str(), (path + ".lock").c_str()), 0);
  auto saved = roster::save_tuning(path, std::vector{sample_record()});
  ASSERT_FALSE(saved) << "saved through a lock that is a link to nowhere";
  EXPECT_NE(saved.error().what().find(path + ".lock is a link to a file that does not exist"), std::string::npos)
      << saved.error().message();
  // roster did not make the link, so the Fix does not tell to remove it (case 73).
  EXPECT_EQ(saved.error().fix().find("rm '"), std::string::npos) << saved.error().message();
  EXPECT_NE(saved.error().fix().find("roster locks with a regular file of that name"), std::string::npos)
      << saved.error().message();
  EXPECT_FALSE(fs::exists(target)) << "a file was created through the link";
  EXPECT_FALSE(fs::exists(path));
  // A lock file that exists (a link to one is followed) still works.
  std::ofstream(target) << "";
  EXPECT_TRUE(roster::save_tuning(path, std::vector{sample_record()}));
}

// The open rule in one place: with O_CREAT a missing file is created, an
// existing one opened as it is, and neither a link to nowhere nor a FIFO is
// followed or waited on.
TEST(HostileFiles, OpenRulesForEveryFileRosterCreates) {
  temp_folder dir;
  std::string kind;
  const std::string fresh = dir.path + "/fresh";
  int fd = roster::detail::open_regular(fresh, O_WRONLY | O_CREAT | O_TRUNC, kind);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_TRUE(fs::is_regular_file(fresh));
  fd = roster::detail::open_regular(fresh, O_RDWR | O_CREAT, kind);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string dangling = dir.path + "/dangling";
  ASSERT_EQ(::symlink((dir.path + "/nowhere").c_str(), dangling.c_str()), 0);
  EXPECT_EQ(roster::detail::open_regular(dangling, O_WRONLY | O_CREAT | O_TRUNC, kind), -2);
  EXPECT_NE(kind.find("a link to a file that does not exist"), std::string::npos) << kind;
  EXPECT_FALSE(fs::exists(dir.path + "/nowhere"));
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  kind.clear();
  EXPECT_EQ(roster::detail::open_regular(fifo, O_WRONLY | O_CREAT | O_TRUNC, kind), -2);  // ENXIO: no reader
  EXPECT_EQ(kind, "a FIFO");
  kind.clear();
  EXPECT_EQ(roster::detail::open_regular(fifo, O_RDWR | O_CREAT, kind), -2);
  EXPECT_EQ(kind, "a FIFO");
  auto w = roster::detail::write_file(fifo, "x", "the chart", "name another file");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().what().find("the chart " + fifo + " is a FIFO, not a regular file; nothing is written"),
            std::string::npos)
      << w.error().message();
  expect_fix(w.error());
}

// XDG_CACHE_HOME=/etc/passwd: the read said "cannot open: Not a directory"
// and suggested chmod u+r '/etc/passwd/roster/tuning.json', a file that
// cannot exist. Each error now names the part of the path at fault.
TEST(HostileFiles, ReadErrorsNameThePartOfThePathAtFault) {
  temp_folder dir;
  const std::string file = dir.path + "/passwd";
  std::ofstream(file) << "root:x:0:0::/root:/bin/sh\n";
  auto notdir = roster::load_tuning(file + "/roster/tuning.json");
  ASSERT_FALSE(notdir);
  EXPECT_EQ(notdir.error().what(), "tuning file " + file + "/roster/tuning.json: " + file +
                                       " is a file, not a folder; nothing is read or written there");
  EXPECT_NE(notdir.error().fix().find("point XDG_CACHE_HOME at a folder"), std::string::npos)
      << notdir.error().message();
  EXPECT_EQ(notdir.error().message().find("chmod"), std::string::npos) << notdir.error().message();
  // Not being root, a folder that cannot be entered, and a file that cannot
  // be read: each its own Fix. Root reads anything: the reads run in a child
  // as nobody.
  const std::string closed = dir.path + "/closed", in_closed = closed + "/tuning.json";
  const std::string unreadable = dir.path + "/unreadable.json";
  fs::create_directories(closed);
  std::ofstream(in_closed) << "{}";
  std::ofstream(unreadable) << "{}";
  ASSERT_EQ(::chmod(unreadable.c_str(), 0), 0);
  ASSERT_EQ(::chmod(closed.c_str(), 0), 0);
  ASSERT_EQ(::chmod(dir.path.c_str(), 0755), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    auto in = roster::load_tuning(in_closed);
    auto file_itself = roster::load_tuning(unreadable);
    if (in || file_itself) ::_exit(4);
    std::printf("%s\n--\n%s\n", in.error().message().c_str(), file_itself.error().message().c_str());
    const bool ok =
        in.error().what() == "tuning file " + in_closed + ": cannot read it: the folder " + closed +
                                 " cannot be entered (Permission denied)" &&
        in.error().fix().find("chmod u+x '" + closed + "'") != std::string_view::npos &&
        file_itself.error().what().starts_with("tuning file " + unreadable + ": cannot read it: Permission denied") &&
        file_itself.error().fix().find("chmod a+r '" + unreadable + "'") != std::string_view::npos;
    ::_exit(ok ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: could not become nobody; 4: read; 5: wrong message (printed above)";
}

// Runs body in a child as nobody (when root; as itself otherwise) and
// returns its exit status.
template <class Body>
int as_nobody(Body body) {
  return test_support::in_child(body, true);
}

// A Fix suggested `rm` for whatever was not a regular file: `rm '/dev/full'`
// for --export /dev/full (which root can run), `rm '/dev/zero'` for a site
// file, `rm` of a folder (which fails). Then `mv '$HOME' '$HOME.old'` for
// --export $HOME. A Fix never tells to remove or move what roster did not
// make: a device, a folder or a link gets "name a regular file".
TEST(HostileFiles, NoFixSuggestsRemovingADeviceOrAFolder) {
  temp_folder dir;
  for (const std::string device : {"/dev/full", "/dev/zero", "/dev/null"}) {
    if (!fs::exists(device)) continue;
    const std::string lock = device + ".lock";
    const bool lock_there = fs::exists(lock);
    auto saved = roster::save_tuning(device, std::vector{sample_record()});
    ASSERT_FALSE(saved) << device;
    auto loaded = roster::load_tuning(device);
    ASSERT_FALSE(loaded) << device;
    auto chart = roster::detail::write_file(device, "x", "the chart", "name another file");
    for (const auto* e : {&saved.error(), &loaded.error(), chart ? nullptr : &chart.error()}) {
      if (e == nullptr) continue;
      EXPECT_EQ(e->message().find("rm '"), std::string::npos) << e->message();
      EXPECT_NE(e->fix().find("name a regular file (this is a character device"), std::string::npos) << e->message();
      EXPECT_NE(e->what().find(device + " is a character device"), std::string::npos) << e->message();
    }
    // Nothing is made beside the device before it is refused (as root, the
    // save made /dev/full.lock); one made all the same is removed again.
    if (!lock_there) {
      EXPECT_FALSE(fs::exists(lock)) << "a lock file was created in /dev";
      std::error_code ec;
      if (fs::is_regular_file(lock, ec)) fs::remove(lock, ec);
    }
  }
  // A link to a device (tuning.json -> /dev/null): the user made the link, so it is not told to go.
  const std::string link = dir.path + "/link.json";
  ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
  auto through = roster::load_tuning(link);
  ASSERT_FALSE(through);
  EXPECT_NE(through.error().fix().find("name a regular file (this is a link to a character device"), std::string::npos)
      << through.error().message();
  EXPECT_EQ(through.error().fix().find("rm '"), std::string::npos) << through.error().message();
  // A folder where the file should be: the user's own tuning.json, or an export.
  const std::string folder = dir.path + "/tuning.json";
  fs::create_directories(folder);
  auto saved = roster::save_tuning(folder, std::vector{sample_record()});
  auto loaded = roster::load_tuning(folder);
  ASSERT_FALSE(saved);
  ASSERT_FALSE(loaded);
  for (const auto* e : {&saved.error(), &loaded.error()}) {
    EXPECT_EQ(e->message().find("rm '"), std::string::npos) << e->message();
    EXPECT_EQ(e->fix().find("mv '"), std::string::npos) << e->message();
    EXPECT_NE(e->fix().find("name a regular file (this is a folder"), std::string::npos) << e->message();
    EXPECT_NE(e->what().find(folder + " is a folder"), std::string::npos) << e->message();
  }
  EXPECT_FALSE(fs::exists(folder + ".lock"));
}

// A lock file or a tuning file a bench run as root left in a user's folder
// blocked every later save of that user: "cannot open: Permission denied",
// Fix "make the folder writable" (it is). flock needs no write access: the
// lock is opened read-only; and where even that fails the Fix names the owner.
TEST(HostileFiles, ALockFileOfAnotherUserDoesNotBlockASave) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: files of another user are made as root";
  temp_folder dir;
  const std::string home = dir.path + "/home";
  fs::create_directories(home);
  ASSERT_EQ(::chmod(dir.path.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), 65534, 65534), 0);
  const std::string path = home + "/tuning.json", lock = path + ".lock";
  // Root's bench: both files root's, 0644.
  ASSERT_TRUE(roster::save_tuning(path, std::vector{sample_record()}));
  ASSERT_TRUE(fs::exists(lock));
  ASSERT_EQ(::chmod(lock.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(as_nobody([&] {
              auto r = sample_record();
              r.device = "nobody's";
              auto ok = roster::save_tuning(path, std::vector{r});
              if (!ok) std::printf("%s\n", ok.error().message().c_str());
              auto back = roster::load_tuning(path);
              return ok && back && back->records.size() == 2 ? 0 : 4;
            }),
            0)
      << "3: could not become nobody; 4: the save failed (printed above)";
  // A lock file nobody may even read: the Fix says whose it is, and how to be rid of it.
  ASSERT_EQ(::chown(path.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(lock.c_str(), 0600), 0);
  EXPECT_EQ(as_nobody([&] {
              auto ok = roster::save_tuning(path, std::vector{sample_record()});
              if (ok) return 4;
              std::printf("%s\n", ok.error().message().c_str());
              const auto fix = ok.error().fix();
              return fix.find("the lock file is not yours (it belongs to uid 0 (root)") != std::string_view::npos &&
                             fix.find("rm '" + lock + "'") != std::string_view::npos &&
                             fix.find("make the folder writable") == std::string_view::npos
                         ? 0
                         : 5;
            }),
            0)
      << "3: could not become nobody; 4: saved; 5: wrong Fix (printed above)";
  // A tuning file of root's that nobody may read: not "chmod u+r" (nobody cannot).
  ASSERT_EQ(::chmod(lock.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(as_nobody([&] {
              auto ok = roster::save_tuning(path, std::vector{sample_record()});
              if (ok) return 4;
              std::printf("%s\n", ok.error().message().c_str());
              return ok.error().what().find("it belongs to uid 0 (root), not to you") != std::string_view::npos &&
                             ok.error().fix().find("chmod u+") == std::string_view::npos &&
                             ok.error().fix().find("mv '") == std::string_view::npos &&
                             ok.error().fix().find("(chown)") != std::string_view::npos
                         ? 0
                         : 5;
            }),
            0)
      << "3: could not become nobody; 4: saved; 5: wrong Fix (printed above)";
}

// A lock file that cannot be made for want of space said "make the folder
// writable"; the Fix follows errno.
TEST(HostileFiles, TheLockFixFollowsWhyTheOpenFailed) {
  temp_folder dir;
  const std::string lock = dir.path + "/tuning.json.lock";
  const auto fix = [&](int e) { return roster::detail::file_lock::open_fix(lock, e, "point XDG_CACHE_HOME elsewhere"); };
  for (int e : {ENOSPC, EDQUOT}) {
    EXPECT_NE(fix(e).find("free some disk space or inodes"), std::string::npos) << fix(e);
    EXPECT_EQ(fix(e).find("writable"), std::string::npos) << fix(e);
  }
  EXPECT_NE(fix(EROFS).find("read-only"), std::string::npos) << fix(EROFS);
  EXPECT_NE(fix(EACCES).find("make the folder writable (chmod u+w '" + dir.path + "')"), std::string::npos)
      << fix(EACCES);
}

// tuning.json as a link into the user's dotfiles: the save renamed a new
// regular file over the link, so the dotfiles never saw a record and the
// link was gone. The file the link leads to is replaced; the link stays.
TEST(HostileFiles, ATuningFileThatIsALinkStaysALink) {
  temp_folder dir;
  fs::create_directories(dir.path + "/dotfiles");
  fs::create_directories(dir.path + "/cache");
  const std::string real = dir.path + "/dotfiles/tuning.json", link = dir.path + "/cache/tuning.json";
  ASSERT_TRUE(roster::save_tuning(real, std::vector{sample_record()}));
  ASSERT_EQ(::symlink("../dotfiles/tuning.json", link.c_str()), 0);
  auto r = sample_record();
  r.device = "second";
  auto ok = roster::save_tuning(link, std::vector{r});
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_TRUE(fs::is_symlink(link));
  auto back = roster::load_tuning(real);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->records.size(), 2u);
  // A corrupt file behind the link is kept beside itself, with its old text.
  { std::ofstream(real) << "{ not json"; }
  std::string kept;
  ok = roster::save_tuning(link, std::vector{r}, &kept);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(kept.rfind(dir.path + "/dotfiles/tuning.json.corrupt", 0), 0u) << kept;
  std::ifstream in(kept);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{ not json");
  // A link to nowhere: nothing is made through it, and the error says so.
  const std::string dangling = dir.path + "/cache/other.json";
  ASSERT_EQ(::symlink("../dotfiles/nowhere/tuning.json", dangling.c_str()), 0);
  ok = roster::save_tuning(dangling, std::vector{r});
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().what().find("is a symbolic link that does not lead to a file"), std::string::npos)
      << ok.error().message();
  expect_fix(ok.error());
  EXPECT_FALSE(fs::exists(dir.path + "/dotfiles/nowhere"));
}

// Case 73: `--export $HOME` (or `/`, `/tmp`) gave `Fix: move the folder away
// (mv '$HOME' '$HOME.old')`; a corrupt file, a site file included, and a file
// over 64 MiB said `delete the file`. A Fix never proposes removing or moving
// a path roster did not create: a table of such failures, each Fix checked.
TEST(HostileFiles, NoFixRemovesOrMovesAPathRosterDidNotCreate) {
  temp_folder dir;
  const char* home = std::getenv("HOME");
  std::vector<std::pair<std::string, roster::error>> fixes;  // (case, error)
  auto add = [&](const std::string& what, const auto& result) {
    ASSERT_FALSE(result) << what;
    fixes.emplace_back(what, result.error());
  };
  for (std::string folder : {std::string("/"), std::string("/tmp"), dir.path}) {
    add("save over the folder " + folder, roster::save_tuning(folder, std::vector{sample_record()}));
    add("load the folder " + folder, roster::load_tuning(folder));
    add("write the folder " + folder, roster::detail::write_file(folder, "x", "the export", "name another file"));
  }
  if (home != nullptr && fs::is_directory(home))
    add("write $HOME", roster::detail::write_file(home, "x", "the export", "name another file"));
  const std::string link = dir.path + "/link.json";
  ASSERT_EQ(::symlink("/dev/null", link.c_str()), 0);
  add("load a link to a device", roster::load_tuning(link));
  const std::string dangling = dir.path + "/dangling.json";
  ASSERT_EQ(::symlink((dir.path + "/nowhere/x").c_str(), dangling.c_str()), 0);
  add("write through a dangling link", roster::detail::write_file(dangling, "x", "the export", "name another file"));
  const std::string corrupt = dir.path + "/site.json";
  std::ofstream(corrupt) << "{\"format\": \"roster-tuning\", \"vers";
  add("load a corrupt site file", roster::load_tuning(corrupt));
  const std::string big = dir.path + "/big.json";
  {
    std::ofstream(big).close();
    fs::resize_file(big, (std::uintmax_t{64} << 20) + 1);  // sparse
  }
  add("load a file over 64 MiB", roster::load_tuning(big));
  add("save over a file over 64 MiB", roster::save_tuning(big, std::vector{sample_record()}));
  const std::string lock_folder = dir.path + "/locked.json";
  fs::create_directories(lock_folder + ".lock");
  add("save where the lock is a folder", roster::save_tuning(lock_folder, std::vector{sample_record()}));
  // Words that tell to take a path away, and the commands that do.
  const std::regex harm(R"((^|[^a-z])(rm|mv|delete|remove|move)( |$)|move (it|the (file|folder|link)) away)",
                        std::regex::icase);
  for (const auto& [what, e] : fixes) {
    expect_fix(e);
    const std::string fix(e.fix());
    EXPECT_FALSE(std::regex_search(fix, harm)) << what << ": " << e.message();
  }
  EXPECT_TRUE(fs::exists(corrupt));
  EXPECT_TRUE(fs::exists(big));
}

// Case 76: on a read-only file system with no cache folder, the Fix said
// "create it yourself". It says the file system is read-only and where to
// point the cache instead. A private mount namespace holds a read-only tmpfs.
TEST(HostileFiles, AReadOnlyFileSystemIsSaidNotCreateItYourself) {
  temp_folder dir;
  const std::string mount_point = dir.path + "/ro";
  fs::create_directories(mount_point);
  const int code = test_support::in_child([&] {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", mount_point.c_str(), "tmpfs", MS_RDONLY, nullptr) != 0)
      return 77;  // no mount namespace here
    auto saved = roster::save_tuning(mount_point + "/cache/roster/tuning.json", std::vector{sample_record()});
    if (saved) return 1;
    const std::string fix(saved.error().fix());
    std::fprintf(stderr, "%s\n", saved.error().message().c_str());
    if (fix.find("yourself") != std::string::npos) return 2;
    if (fix.find("read-only") == std::string::npos) return 3;
    return 0;
  });
  if (code == 77) GTEST_SKIP() << "no private mount namespace (unshare) on this machine";
  EXPECT_EQ(code, 0);
}

}  // namespace
