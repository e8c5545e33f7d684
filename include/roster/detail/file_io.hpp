#pragma once
// Private: files. A bounded whole-file read, and a replace that readers see
// whole or not at all: under an exclusive lock, a temporary file beside the
// target, fsync, rename over it, fsync of the folder.

#include <roster/error.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace roster::detail {

/// The largest file read_file reads by default.
inline constexpr std::size_t max_file_bytes = std::size_t{64} << 20;

/// Reads a whole file of at most max_bytes; nullopt when it does not exist.
/// `label` names the file in messages ("tuning file").
inline expected<std::optional<std::string>> read_file(const std::string& path, std::string_view label,
                                                      std::size_t max_bytes = max_file_bytes) {
  const std::string shown = std::string(label) + " " + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return make_error(errc::io, shown + ": cannot open: " + std::strerror(errno),
                      "make the file readable, or delete it");
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
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(errc::io,
                          std::string(label) + ": cannot create the folder " + part + ": " + std::strerror(errno),
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
// would not work, since rename replaces it).
class file_lock {
 public:
  explicit file_lock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

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
  ::fchmod(fd, 0644);
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

/// Creates path's folder, takes an exclusive lock on PATH.lock, and replaces
/// path with the text make_text() returns, called under the lock (so it may
/// read the old file and merge).
template <class F>
expected<void> locked_replace(const std::string& path, std::string_view label, F&& make_text) {
  const auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0)
    if (auto ok = make_folders(path.substr(0, slash), label); !ok) return ok;
  file_lock lock(path);
  if (!lock.held())
    return make_error(errc::io, std::string(label) + " " + path + ".lock: cannot lock: " + std::strerror(errno),
                      "make the folder writable, or point XDG_CACHE_HOME at a writable folder");
  const std::string text = make_text();
  return replace_file(path, text, label);
}

}  // namespace roster::detail
