#pragma once
// Private: files. A bounded whole-file read, a plain write, and a replace
// that readers see whole or not at all: under an exclusive lock, a temporary
// file beside the target, fsync, rename over it, fsync of the folder.
//
// Every path roster opens here follows the same rules: it is opened without
// blocking (a FIFO never hangs) and must be a regular file; a file that does
// not exist is created with O_EXCL, so a link (even one to nowhere) is never
// followed to create a file; and the only files roster removes are its own
// temporary files, whose names start with temp_prefix.

#include <roster/error.hpp>
#include <roster/detail/base/file_place.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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
/// and refuses anything that is not a regular file. With O_CREAT, an existing
/// file is opened as it is (a link to one is followed), and a missing one is
/// created with O_EXCL: a link is never followed to create a file, so a link
/// to nowhere is refused rather than creating its target. Returns the fd, -1
/// with errno when open failed, or -2 when the file is not regular (kind
/// says what).
inline int open_regular(const std::string& path, int flags, std::string& kind, mode_t create_mode = 0644) {
  const int plain = (flags & ~(O_CREAT | O_EXCL)) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 8; ++attempt) {
    if ((flags & O_EXCL) == 0) fd = ::open(path.c_str(), plain);
    if (fd >= 0 || (flags & O_CREAT) == 0 || (errno != ENOENT && (flags & O_EXCL) == 0)) break;
    fd = ::open(path.c_str(), plain | O_CREAT | O_EXCL, create_mode);
    if (fd >= 0 || errno != EEXIST || (flags & O_EXCL) != 0) break;
    // EEXIST: another process created it between the two opens (open it
    // again), or it is a link whose target does not exist.
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && ::stat(path.c_str(), &link) != 0) {
      kind = "a link to a file that does not exist (roster does not create a file through a link)";
      return -2;
    }
  }
  if (fd < 0) {
    // A FIFO that no process reads refuses a write-only open with ENXIO.
    const int e = errno;
    struct stat st {};
    if (e == ENXIO && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      kind = file_kind(st.st_mode);
      return -2;
    }
    errno = e;
    return -1;
  }
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

/// The Fix for a path that is not a regular file. `rm` is suggested only for
/// a link (it removes the link, not what it leads to); never for a device, a FIFO or a
/// socket (as root, `rm /dev/zero` succeeds), nor for a folder (it fails).
/// `place_fix` says how to name another file.
inline std::string not_regular_fix(const std::string& path, const std::string& kind, std::string_view place_fix) {
  // roster did not make what stands there ($HOME, /, a link the user made),
  // so the Fix never says to remove or move it: name another file.
  struct stat link {};
  const bool a_link = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && !kind.starts_with("a link");
  return "name a regular file (this is " + std::string(a_link ? "a link to " : "") + kind +
         ", which roster neither reads, replaces nor moves, as it did not make it): " + std::string(place_fix);
}

/// The error for a file that is not a regular file; `shown` is "LABEL PATH".
inline unexpected not_regular(const std::string& path, const std::string& shown, const std::string& kind,
                              std::string_view place_fix) {
  return make_error(errc::io, shown + " is " + kind + ", not a regular file; it is not read",
                    not_regular_fix(path, kind, place_fix));
}

/// What the file at path is when it exists and is not a regular file
/// (following links; "a link to a file that does not exist" is not named:
/// roster replaces such a link, never follows it); empty otherwise.
inline std::string not_regular_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return file_kind(st.st_mode);
}

/// Who owns a file, in words, when it is not the caller: "uid 0 (root)".
inline std::string other_owner(const struct stat& st) {
  if (st.st_uid == ::geteuid()) return {};
  std::string who = "uid " + std::to_string(st.st_uid);
  if (st.st_uid == 0) who += " (root)";
  return who;
}

/// How to point the tuning file's folder elsewhere: the Fix when its path
/// cannot be a folder.
inline constexpr std::string_view cache_place_fix =
    "point XDG_CACHE_HOME at a folder roster may write to (or unset it to use ~/.cache)";

/// The Fix when a file cannot be created in folder (errno e): free space or
/// inodes for ENOSPC, a read-only file system, else a folder to make writable.
inline std::string folder_write_fix(const std::string& folder, int e, std::string_view place_fix) {
  if (e == ENOSPC || e == EDQUOT)
    return "free some disk space or inodes there (df -h -i '" + folder + "'), or " + std::string(place_fix);
  if (e == EROFS) return "the file system is mounted read-only: " + std::string(place_fix);
  return "make the folder writable (chmod u+w '" + folder + "'), or " + std::string(place_fix);
}

/// Says why path could not be opened, from errno e, in words that name the
/// part of the path at fault: a file where a folder should be (ENOTDIR), a
/// folder on the way that cannot be entered, or the file itself. `shown` is
/// "LABEL PATH"; `place_fix` says how to point the path elsewhere.
inline unexpected open_failure(const std::string& path, const std::string& shown, int e, std::string_view doing,
                               std::string_view place_fix) {
  // The deepest folder on the way that exists, and the part after it.
  std::string reached = path.starts_with('/') ? "/" : ".";
  std::string blocked;
  for (std::size_t at = 0; at < path.size();) {
    const std::size_t slash = path.find('/', at);
    const std::size_t end = slash == std::string::npos ? path.size() : slash;
    if (end > at) {
      const std::string part = path.substr(0, end);
      struct stat st {};
      if (::stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || end == path.size()) {
        blocked = part;
        if (e == ENOTDIR && ::stat(part.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && end < path.size())
          return make_error(errc::io,
                            shown + ": " + part + " is " + file_kind(st.st_mode) +
                                ", not a folder; nothing is read or written there",
                            std::string(place_fix));
        break;
      }
      reached = part;
    }
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  if (e == ENOENT && blocked != path) {
    const std::string folder = path.substr(0, path.rfind('/'));
    return make_error(errc::io, shown + ": cannot " + std::string(doing) + " it: the folder " + folder +
                                    " does not exist",
                      "create the folder (mkdir -p '" + folder + "'), or " + std::string(place_fix));
  }
  if (e == EACCES) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      return make_error(errc::io,
                        shown + ": cannot " + std::string(doing) + " it: the folder " + reached +
                            " cannot be entered (" + std::strerror(e) + ")",
                        "make the folder searchable (chmod u+x '" + reached + "'), or " + std::string(place_fix));
    if (const std::string owner = other_owner(st); !owner.empty())
      return make_error(errc::io,
                        shown + ": cannot " + std::string(doing) + " it: " + std::strerror(e) +
                            " (it belongs to " + owner + ", not to you)",
                        "have its owner make it " + std::string(doing == "read" ? "readable (chmod a+r '"
                                                                                 : "writable (chmod a+w '") +
                            path + "') or give it to you (chown), or " + std::string(place_fix));
    return make_error(errc::io, shown + ": cannot " + std::string(doing) + " it: " + std::strerror(e),
                      std::string(doing == "read" ? "make the file readable (chmod u+r '"
                                                  : "make the file writable (chmod u+w '") +
                          path + "'), or " + std::string(place_fix));
  }
  if (e == ENOSPC || e == EDQUOT || e == EROFS) {
    const auto slash = path.rfind('/');
    const std::string folder =
        slash == std::string::npos ? std::string(".") : path.substr(0, std::max<std::size_t>(slash, 1));
    return make_error(errc::io, shown + ": cannot " + std::string(doing) + " it: " + std::strerror(e),
                      folder_write_fix(folder, e, place_fix));
  }
  return make_error(errc::io, shown + ": cannot " + std::string(doing) + " it: " + std::strerror(e),
                    "check the path, or " + std::string(place_fix));
}

/// The largest file read_file reads by default.
inline constexpr std::size_t max_file_bytes = std::size_t{64} << 20;

/// The error for a file larger than read_file's bound; `size` is its size in bytes.
inline unexpected too_large_file(const std::string& shown, std::size_t max_bytes, std::uint64_t size) {
  const std::string bound =
      max_bytes >= (std::size_t{1} << 20) ? std::to_string(max_bytes >> 20) + " MiB"
                                          : std::to_string(max_bytes) + " bytes";
  return make_error(errc::io,
                    shown + ": " + std::to_string(size) + " bytes, larger than " + bound + "; it is not read",
                    "check that the path names the file you meant (roster leaves this one as it is), or name "
                    "another file");
}

/// Reads a whole file of at most max_bytes; nullopt when it does not exist.
/// The size is checked (fstat) before anything is read.
/// `label` names the file in messages ("tuning file").
/// `place_fix` is the Fix when the path cannot be reached (a file where a
/// folder should be).
inline expected<std::optional<std::string>> read_file(const std::string& path, std::string_view label,
                                                      std::size_t max_bytes = max_file_bytes,
                                                      std::string_view place_fix = cache_place_fix) {
  const std::string shown = std::string(label) + " " + path;
  std::string kind;
  const int fd = open_regular(path, O_RDONLY, kind);
  if (fd == -2) return not_regular(path, shown, kind, place_fix);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return open_failure(path, shown, errno, "read", place_fix);
  }
  // The size first: a file past the bound (a sparse 1 GB file, a log named
  // by mistake) is refused before a byte is read or a buffer grown for it.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return too_large_file(shown, max_bytes, static_cast<std::uint64_t>(st.st_size));
  }
  std::string text;
  // One allocation of the size fstat gave (a file that grows meanwhile is
  // still bounded below), not a string doubled up to the bound.
  if (st.st_size > 0) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return make_error(errc::io, shown + ": cannot read: " + std::strerror(e),
                        "check the disk or file system it is on (dmesg), or name another file");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      return too_large_file(shown, max_bytes, text.size());
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(text));
}

/// Creates a folder and its parents (mkdir -p).
inline expected<void> make_folders(const std::string& dir, std::string_view label,
                                   std::string_view place_fix = cache_place_fix) {
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      const std::string part = dir.substr(0, i);
      if (::mkdir(part.c_str(), 0755) == 0) continue;
      const int e = errno;
      struct stat st {};
      if (e == EEXIST && ::stat(part.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        return make_error(errc::io, std::string(label) + ": " + part + " is " + file_kind(st.st_mode) +
                                        ", not a folder; nothing is read or written there",
                          std::string(place_fix));
      if (e != EEXIST)
        return make_error(errc::io,
                          std::string(label) + ": cannot create the folder " + part + ": " + std::strerror(e),
                          // "create it yourself" cannot help where the file system is read-only or full.
                          e == EROFS || e == ENOSPC || e == EDQUOT
                              ? folder_write_fix(part.substr(0, std::max<std::size_t>(part.rfind('/'), 1)), e,
                                                 place_fix)
                              : "create it yourself, or " + std::string(place_fix));
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

/// Writes text to path, creating it or truncating it, under the open rules
/// above: a FIFO, a device or a link to nowhere is refused, not written.
inline expected<void> write_file(const std::string& path, std::string_view text, std::string_view label,
                                 std::string_view place_fix) {
  const std::string shown = std::string(label) + " " + path;
  std::string kind;
  const int fd = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, kind);
  if (fd == -2)
    return make_error(errc::io, shown + " is " + kind + ", not a regular file; nothing is written to it",
                      not_regular_fix(path, kind, place_fix));
  if (fd < 0) return open_failure(path, shown, errno, "write", place_fix);
  const bool written = write_all(fd, text);
  const int e = errno;
  if (::close(fd) != 0 || !written)
    return make_error(errc::io, shown + ": cannot write it: " + std::strerror(written ? errno : e),
                      "free some disk space, or name a file on another disk");
  return {};
}

// Holds an exclusive flock on PATH.lock: the lock file is never renamed or
// deleted, so every writer locks the same inode (locking the data file itself
// would not work, since rename replaces it). The lock file must be a regular
// file, and the wait is bounded: a writer stuck elsewhere (or a lock kept by a
// process that never lets go) gives an error, not a hang.
class file_lock {
 public:
  static constexpr std::chrono::milliseconds default_wait{30000};

  explicit file_lock(const std::string& path, std::chrono::milliseconds wait = default_wait,
                     std::string_view place_fix = cache_place_fix) {
    const std::string lock_path = path + ".lock";
    std::string kind;
    fd_ = open_regular(lock_path, O_RDWR | O_CREAT, kind);
    // A lock file another user made (a bench run as root) cannot be opened
    // for writing, but flock needs no write access: open it read-only.
    if (fd_ == -1 && (errno == EACCES || errno == EPERM)) {
      const int e = errno;
      fd_ = open_regular(lock_path, O_RDONLY, kind);
      if (fd_ == -1) errno = e;
    }
    if (fd_ == -2) {
      fd_ = -1;
      why_ = lock_path + " is " + kind + ", not a regular file";
      // roster did not make what stands there, so it is not told to go.
      fix_ = "roster locks with a regular file of that name and leaves what stands there as it is: " +
             std::string(place_fix);
      return;
    }
    if (fd_ < 0) {
      const int e = errno;
      why_ = lock_path + ": cannot open: " + std::strerror(e);
      fix_ = open_fix(lock_path, e, place_fix);
      return;
    }
    const auto until = std::chrono::steady_clock::now() + wait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e != EWOULDBLOCK || std::chrono::steady_clock::now() >= until) {
        ::close(fd_);
        fd_ = -1;
        busy_ = e == EWOULDBLOCK;
        why_ = lock_path + (e == EWOULDBLOCK ? ": still locked by another writer after " +
                                                   std::to_string(wait.count() / 1000) + " s"
                                             : ": cannot lock: " + std::string(std::strerror(e)));
        fix_ = e == EWOULDBLOCK ? "wait for the other roster-info bench to finish (fuser '" + lock_path +
                                      "' names it), then try again"
                                : "check the file system of '" + lock_path + "' (it may not support locks), or " +
                                      std::string(place_fix);
        return;
      }
      const timespec pause{0, 20'000'000};
      ::nanosleep(&pause, nullptr);
    }
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  bool held() const noexcept { return fd_ >= 0; }
  /// Whether the lock was not had because another process kept it past the wait.
  bool busy() const noexcept { return busy_; }
  /// The Fix when the lock file lock_path cannot be opened with errno e: the
  /// owner of a lock file that is not the caller's, space or inodes for
  /// ENOSPC, a read-only file system, or a folder that cannot be written.
  static std::string open_fix(const std::string& lock_path, int e, std::string_view place_fix) {
    const auto slash = lock_path.rfind('/');
    const std::string folder =
        slash == std::string::npos ? std::string(".") : lock_path.substr(0, std::max<std::size_t>(slash, 1));
    struct stat st {};
    const bool exists = ::stat(lock_path.c_str(), &st) == 0;
    if ((e == EACCES || e == EPERM) && exists) {
      if (const std::string owner = other_owner(st); !owner.empty())
        return "the lock file is not yours (it belongs to " + owner +
               ", made by a bench run as that user): remove it when no roster-info bench runs (rm '" + lock_path +
               "'; it holds no records), or have its owner give it to you (chown), or " + std::string(place_fix);
      return "make the lock file readable (chmod u+rw '" + lock_path + "'), or " + std::string(place_fix);
    }
    return folder_write_fix(folder, e, place_fix);
  }
  /// Why the lock is not held, and the Fix.
  unexpected failure(std::string_view label) const {
    return make_error(errc::io, std::string(label) + " " + why_, fix_);
  }

 private:
  int fd_ = -1;
  bool busy_ = false;
  std::string why_, fix_;
};

/// How old a temporary file must be before a writer removes it as stale.
inline constexpr std::chrono::seconds stale_temp_age{600};

/// The start of every temporary file's name: a name only roster makes, so
/// that cleaning up never touches a user's file (tuning.json.backup, say).
inline constexpr std::string_view temp_prefix = ".roster-tmp-";

/// Returns the name of path's temporary files without their random part:
/// FOLDER/.roster-tmp-NAME. (mkstemp adds six letters or digits).
inline std::string temp_stem(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  return dir + std::string(temp_prefix) + (slash == std::string::npos ? path : path.substr(slash + 1)) + ".";
}

/// Removes temporary files a killed writer left beside path
/// (.roster-tmp-NAME.XXXXXX: roster's prefix, then exactly six letters or
/// digits, the mkstemp pattern). Called under the lock, so no cooperating
/// writer is between mkstemp and rename: a temp file seen now belongs to a
/// writer that is gone. The age guard is for the writers the lock does not
/// see (a folder shared over NFS, where flock may be local to each host):
/// none of them takes ten minutes between mkstemp and rename of a file of a
/// few KB, so one that old is dead too. Only regular files are removed, never
/// followed links, and never a name without roster's prefix.
inline void remove_stale_temps(const std::string& path, std::chrono::seconds min_age = stale_temp_age) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  const std::string stem = temp_stem(path);
  const std::string base = stem.substr(stem.rfind('/') + 1);
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
inline expected<void> replace_file(const std::string& path, std::string_view text, std::string_view label,
                                   std::string_view place_fix = cache_place_fix) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  std::string temp = temp_stem(path) + "XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return make_error(errc::io,
                      std::string(label) + ": cannot create a temporary file beside " + path + ": " +
                          std::strerror(errno),
                      folder_write_fix(dir, errno, place_fix));
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

/// The file a replace of path writes: path itself, or, where path is a
/// symbolic link to a file, that file (the link is the user's setup, kept,
/// not replaced by a regular file). A link to nowhere is refused: no file
/// is created through a link.
inline expected<std::string> link_target(const std::string& path, std::string_view label) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) {
    const int e = errno;
    return make_error(errc::io,
                      std::string(label) + " " + path + " is a symbolic link that does not lead to a file (" +
                          std::strerror(e) + "); nothing is written through it",
                      "point the link at an existing file, or name another path");
  }
  std::string resolved(real);
  std::free(real);
  return resolved;
}

/// Creates path's folder, takes an exclusive lock on TARGET.lock, removes stale
/// temporary files, and replaces path with the text make_text() returns
/// (an expected<std::string>), called under the lock (so it may read the old
/// file and merge, or refuse to replace it).
///
/// A path that exists and is not a regular file (a device, a FIFO, a folder)
/// is refused first, before any lock file is made beside it (as root,
/// --export /dev/full would otherwise create /dev/full.lock), and so is a
/// path whose link chain passes through /dev or /proc (/dev/stdout leads to
/// the file the shell opened). The lock is TARGET.lock, beside the file at
/// the end of path's link chain. `place_fix` says how to name another file.
template <class F>
expected<void> locked_replace(const std::string& path, std::string_view label, F&& make_text,
                              std::string_view place_fix = cache_place_fix) {
  if (const std::string kind = not_regular_kind(path); !kind.empty())
    return make_error(errc::io,
                      std::string(label) + " " + path + " is " + kind +
                          ", not a regular file; it is not replaced, and nothing is written",
                      not_regular_fix(path, kind, place_fix));
  // /dev/stdout leads through /proc/self/fd/1 to whatever the shell opened
  // (a log opened with >>): a regular file to stat, which a rename would
  // replace and a lock would sit beside. No path through /dev or /proc is.
  if (const std::string hop = special_place(path); !hop.empty())
    return make_error(errc::io,
                      std::string(label) + " " + path + " leads to " + hop +
                          ", under /dev or /proc: it is not replaced, no lock is made beside it, and nothing is "
                          "written",
                      "name a regular file outside /dev and /proc, or " + std::string(place_fix));
  const auto slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0)
    if (auto ok = make_folders(path.substr(0, slash), label, place_fix); !ok) return ok;
  // The lock belongs to the file that is replaced: where path is a link, the
  // file at the end of its chain (two caches linked to one shared file lock
  // one TARGET.lock; a lock beside each link let their saves interleave and
  // lose records). A link moved while the lock was awaited is resolved again.
  for (int attempt = 0;; ++attempt) {
    auto target = link_target(path, label);
    if (!target) return std::move(target).error();
    file_lock lock(*target, file_lock::default_wait, place_fix);
    if (!lock.held()) return lock.failure(label);
    auto now = link_target(path, label);
    if (!now) return std::move(now).error();
    if (*now != *target && attempt < 8) continue;
    remove_stale_temps(*target);
    expected<std::string> text = make_text();
    if (!text) return std::move(text).error();
    return replace_file(*target, *text, label, place_fix);
  }
}

}  // namespace roster::detail
