// roster-info's writes to standard output and standard error: none of them
// throws or aborts, and each failure is remembered for the exit status.

#include "info.hpp"
#include "outputs.hpp"

#include <roster/detail/base/file_io.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace roster::info {

namespace {

// The first failed write to each stream, as an errno value (0: none).
int stdout_errno = 0;
int stderr_errno = 0;
bool stderr_closed = false;  // closed when roster-info started: /dev/null took its place
bool stdout_reported = false;

int errno_or_eio() { return errno != 0 ? errno : EIO; }

// What to do about a stream that could not be written, by the reason.
std::string output_fix(int e) {
  if (e == EPIPE)
    return "the program reading the output ended before roster-info finished: let it read everything (less, not "
           "head), or send the output to a file";
  if (e == EBADF) return "the stream is closed: run roster-info with it open, or send it to a file (> out.txt)";
  return "free space on the disk it goes to, or send the output elsewhere";
}

}  // namespace

void guard_standard_streams() {
  // A closed standard stream would be the next file opened (the tuning file,
  // its lock): what roster-info prints would land in it. /dev/null takes the
  // place, and a closed output stream counts as a failed write.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
    if (fd == 1) stdout_errno = EBADF;
    if (fd == 2) stderr_closed = true;  // a failure only once there is something to say
  }
}

void say(std::string_view text) {
  if (text.empty()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && stdout_errno == 0)
    stdout_errno = errno_or_eio();
}

void flush_out() {
  errno = 0;
  if (std::fflush(stdout) != 0 && stdout_errno == 0) stdout_errno = errno_or_eio();
}

void say_error(std::string_view text) {
  if (text.empty()) return;
  if (stderr_closed) {
    stderr_errno = EBADF;
    return;
  }
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stderr) == text.size() && std::fflush(stderr) == 0;
  if (!ok && stderr_errno == 0) stderr_errno = errno_or_eio();
}

bool stderr_failed() noexcept { return stderr_errno != 0 || std::ferror(stderr) != 0; }

bool stdout_written(std::string_view what) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed && stdout_errno == 0) stdout_errno = errno_or_eio();
  if (stdout_errno == 0 && std::ferror(stdout) != 0) stdout_errno = EIO;
  if (stdout_errno == 0) return true;
  if (!stdout_reported) {
    stdout_reported = true;
    print_error("roster-info", roster::error(errc::io,
                                             std::string(what) + " could not be written to standard output: " +
                                                 std::strerror(stdout_errno),
                                             output_fix(stdout_errno)));
  }
  return false;
}

std::optional<roster::error> names_a_tuning_file(std::string_view option, const std::string& path) {
  std::vector<std::string> files;
  if (auto own = tuning_path()) files.push_back(*own);
  if (option != "--export")
    if (auto listed = tuning_paths())
      for (const auto& f : *listed)
        if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  for (const auto& file : files)
    for (const std::string& kept : {file, file + ".lock"}) {
      if (!detail::same_file(path, kept)) continue;
      const bool lock = kept.ends_with(".lock");
      return roster::error(errc::invalid_argument,
                           std::string(option) + " " + path + " is " +
                               (lock ? "the lock file of roster's tuning file " + file
                                     : "roster's tuning file " + kept) +
                               "; roster-info does not write over it",
                           "name another file for " + std::string(option) + ", e.g. " +
                               (option == "--svg" ? "--svg stream.svg" : "--export /site/roster.json"));
    }
  return std::nullopt;
}

std::optional<expected<void>> write_stream_output(const std::string& path, std::string_view text,
                                                  std::string_view label) {
  const std::string shown = std::string(label) + " " + path;
  auto failed = [&](int e, const std::string& doing) -> expected<void> {
    return make_error(errc::io, shown + ": cannot " + doing + ": " + std::strerror(e),
                      "name a regular file, or a stream that can be written (a pipe that is read, /dev/stdout)");
  };
  // A descriptor of this process (/dev/stdout -> /proc/self/fd/1): written
  // where it stands, so `>> run.log` appends and `| jq` reads it.
  if (const int fd = detail::descriptor_alias(path); fd >= 0) {
    std::fflush(stdout);
    std::fflush(stderr);
    if (::fcntl(fd, F_GETFL) == -1) return failed(errno, "write to descriptor " + std::to_string(fd));
    if (!detail::write_all(fd, text)) return failed(errno, "write it");
    return expected<void>{};
  }
  const std::string kind = detail::not_regular_kind(path), hop = detail::special_place(path);
  if ((kind.empty() && hop.empty()) || kind == "a folder") return std::nullopt;
  if (kind.empty() || kind == "a block device")
    return make_error(errc::io,
                      shown + " leads to " + (hop.empty() ? path : hop) + ", " +
                          (kind.empty() ? std::string("a file under /dev or /proc") : kind) +
                          ", which roster-info neither replaces nor writes; nothing is written",
                      "name a regular file outside /dev and /proc, or /dev/stdout to write to standard output");
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)  // a FIFO no process reads (a socket says the same)
      return make_error(errc::io, shown + " is " + kind + ", not a regular file; nothing is written to it (no "
                                  "process reads it)",
                        "start the program that reads " + path +
                            " first (roster-info does not wait for one), or name a regular file");
    return failed(errno, "open it");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    ::close(fd);
    return make_error(errc::io, shown + " changed while it was opened; nothing is written", "try again");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a reader that is slow is waited for
  const bool written = detail::write_all(fd, text);
  const int e = errno;
  if (::close(fd) != 0 || !written) return failed(written ? errno : e, "write it");
  return expected<void>{};
}

int final_status(int status) {
  const bool out_ok = stdout_written("the output");
  return worse_status(status, out_ok && !stderr_failed() ? 0 : output_failed);
}

}  // namespace roster::info
