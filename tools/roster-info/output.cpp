// roster-info's writes to standard output and standard error: none of them
// throws or aborts, and each failure is remembered for the exit status.

#include "info.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>

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

int final_status(int status) {
  const bool out_ok = stdout_written("the output");
  return worse_status(status, out_ok && !stderr_failed() ? 0 : output_failed);
}

}  // namespace roster::info
