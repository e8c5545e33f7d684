// Hostile cases of roster's files (docs/hostile.md): every path roster opens
// through detail/file_io.hpp follows the same rules (no blocking on a FIFO,
// no link followed to create a file), and an error names the part of the
// path at fault with a Fix that fits it.
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <roster/detail/file_io.hpp>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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
  EXPECT_NE(saved.error().fix().find("rm '" + path + ".lock'"), std::string::npos) << saved.error().message();
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
        file_itself.error().what() == "tuning file " + unreadable + ": cannot read it: Permission denied" &&
        file_itself.error().fix().find("chmod u+r '" + unreadable + "'") != std::string_view::npos;
    ::_exit(ok ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: could not become nobody; 4: read; 5: wrong message (printed above)";
}

}  // namespace
