#pragma once
// Private: files. A bounded whole-file read, and a replace that readers see
// whole or not at all: under an exclusive lock, a temporary file beside the
// target, fsync, rename over it, fsync of the folder.

#include <roster/error.hpp>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace roster::detail {

/// What a file that is not a regular one is, in words ("a FIFO").
inline std::string file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a file";
  return "not a regular file";
}

/// Opens path without blocking (a FIFO would block open and read forever)
/// and refuses anything that is not a regular file. Returns the fd, -1 with
/// errno when open failed, or -2 when the file is not regular (kind says what).
inline int open_regular(const std::string& path, int flags, std::string& kind, mode_t create_mode = 0644) {
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, create_mode);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    kind = file_kind(st.st_mode);
    ::close(fd);
    return -2;
  }
  // A regular file never blocks; clear O_NONBLOCK for plain reads and writes.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

/// The error for a file that is not a regular file.
inline unexpected not_regular(const std::string& shown, const std::string& kind) {
  return make_error(errc::io, shown + " is " + kind + ", not a regular file; it is not read",
                    "delete it (rm '" + shown.substr(shown.rfind(' ') + 1) +
                        "'); roster writes a regular file there next time");
}

/// The largest file read_file reads by default.
inline constexpr std::size_t max_file_bytes = std::size_t{64} << 20;

/// Reads a whole file of at most max_bytes; nullopt when it does not exist.
/// `label` names the file in messages ("tuning file").
inline expected<std::optional<std::string>> read_file(const std::string& path, std::string_view label,
                                                      std::size_t max_bytes = max_file_bytes) {
  const std::string shown = std::string(label) + " " + path;
  std::string kind;
  const int fd = open_regular(path, O_RDONLY, kind);
  if (fd == -2) return not_regular(shown, kind);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return make_error(errc::io, shown + ": cannot open: " + std::strerror(errno),
                      "make the file readable (chmod u+r '" + path + "'), or move it away");
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return make_error(errc::io, shown + ": cannot read: " + std::strerror(e), "make the file readable, or delete it");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      return make_error(errc::io,
                        shown + ": larger than " + std::to_string(max_bytes >> 20) + " MiB; it is not read",
                        "delete the file (it is not one roster wrote)");
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(text));
}

/// Creates a folder and its parents (mkdir -p).
inline expected<void> make_folders(const std::string& dir, std::string_view label) {
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      const std::string part = dir.substr(0, i);
      if (::mkdir(part.c_str(), 0755) == 0) continue;
      const int e = errno;
      struct stat st {};
      if (e == EEXIST && ::stat(part.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        return make_error(errc::io, std::string(label) + ": " + part + " is " + file_kind(st.st_mode) +
                                        ", not a folder; nothing is read or written there",
                          "point XDG_CACHE_HOME at a folder (or unset it to use ~/.cache)");
      if (e != EEXIST)
        return make_error(errc::io,
                          std::string(label) + ": cannot create the folder " + part + ": " + std::strerror(e),
                          "create it yourself, or point XDG_CACHE_HOME at a writable folder");
    }
  }
  return {};
}

/// Writes all of text to fd, retrying short writes; false on an error (errno says which).
inline bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Holds an exclusive flock on PATH.lock: the lock file is never renamed or
// deleted, so every writer locks the same inode (locking the data file itself
// would not work, since rename replaces it). The lock file must be a regular
// file, and the wait is bounded: a writer stuck elsewhere (or a lock kept by a
// process that never lets go) gives an error, not a hang.
class file_lock {
 public:
  static constexpr std::chrono::milliseconds default_wait{30000};

  explicit file_lock(const std::string& path, std::chrono::milliseconds wait = default_wait) {
    const std::string lock_path = path + ".lock";
    std::string kind;
    fd_ = open_regular(lock_path, O_RDWR | O_CREAT, kind);
    if (fd_ == -2) {
      fd_ = -1;
      why_ = lock_path + " is " + kind + ", not a regular file";
      fix_ = "delete it (rm '" + lock_path + "'); roster creates a regular lock file";
      return;
    }
    if (fd_ < 0) {
      why_ = lock_path + ": cannot open: " + std::strerror(errno);
      fix_ = "make the folder writable, or point XDG_CACHE_HOME at a writable folder";
      return;
    }
    const auto until = std::chrono::steady_clock::now() + wait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e != EWOULDBLOCK || std::chrono::steady_clock::now() >= until) {
        ::close(fd_);
        fd_ = -1;
        why_ = lock_path + (e == EWOULDBLOCK ? ": still locked by another writer after " +
                                                   std::to_string(wait.count() / 1000) + " s"
                                             : ": cannot lock: " + std::string(std::strerror(e)));
        fix_ = e == EWOULDBLOCK ? "wait for the other roster-info bench to finish (fuser '" + lock_path +
                                      "' names it), then try again"
                                : "make the folder writable, or point XDG_CACHE_HOME at a writable folder";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  bool held() const noexcept { return fd_ >= 0; }
  /// Why the lock is not held, and the Fix.
  unexpected failure(std::string_view label) const {
    return make_error(errc::io, std::string(label) + " " + why_, fix_);
  }

 private:
  int fd_ = -1;
  std::string why_, fix_;
};

/// How old a temporary file must be before a writer removes it as stale.
inline constexpr std::chrono::seconds stale_temp_age{600};

/// Removes temporary files a killed writer left beside path (path.XXXXXX, the
/// mkstemp pattern: exactly six letters or digits after the dot). Called under
/// the lock, so no cooperating writer is between mkstemp and rename: a temp
/// file seen now belongs to a writer that is gone. The age guard is for the
/// writers the lock does not see (a folder shared over NFS, where flock may be
/// local to each host): none of them takes ten minutes between mkstemp and
/// rename of a file of a few KB, so one that old is dead too. Only regular
/// files are removed, never followed links.
inline void remove_stale_temps(const std::string& path, std::chrono::seconds min_age = stale_temp_age) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  const std::string base = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const auto now = std::chrono::system_clock::now();
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.size() != base.size() + 6 || !name.starts_with(base)) continue;
    bool pattern = true;
    for (char c : name.substr(base.size()))
      pattern = pattern && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
    if (!pattern) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto mtime = std::chrono::system_clock::from_time_t(st.st_mtime);
    if (now - mtime < min_age) continue;
    ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

/// Replaces the file at path with text, atomically: a temporary file in the
/// same folder, fsync, rename over path, fsync of the folder. Readers see the
/// old file or the new one whole. The caller serialises writers (file_lock).
inline expected<void> replace_file(const std::string& path, std::string_view text, std::string_view label) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return make_error(errc::io,
                      std::string(label) + ": cannot create a temporary file beside " + path + ": " +
                          std::strerror(errno),
                      "make the folder writable, or point XDG_CACHE_HOME at a writable folder");
  // Keep the mode of the file replaced (0644 for a new one).
  struct stat old {};
  const mode_t mode = ::stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode) ? (old.st_mode & 07777) : 0644;
  ::fchmod(fd, mode);
  const bool written = write_all(fd, text) && ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = written ? errno : write_errno;
    ::unlink(temp.c_str());
    return make_error(errc::io, std::string(label) + " " + path + ": cannot write: " + std::strerror(e),
                      "free some disk space or make the folder writable, then try again");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

/// Creates path's folder, takes an exclusive lock on PATH.lock, removes stale
/// temporary files, and replaces path with the text make_text() returns
/// (an expected<std::string>), called under the lock (so it may read the old
/// file and merge, or refuse to replace it).
template <class F>
expected<void> locked_replace(const std::string& path, std::string_view label, F&& make_text) {
  const auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0)
    if (auto ok = make_folders(path.substr(0, slash), label); !ok) return ok;
  file_lock lock(path);
  if (!lock.held()) return lock.failure(label);
  remove_stale_temps(path);
  expected<std::string> text = make_text();
  if (!text) return std::move(text).error();
  return replace_file(path, *text, label);
}

}  // namespace roster::detail
