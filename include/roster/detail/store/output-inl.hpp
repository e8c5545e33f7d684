#pragma once
// Private: the bodies of roster/output.hpp, outputs a user names.

#include <roster/output.hpp>
#include <roster/tuning/store.hpp>
#include <roster/detail/base/file_io.hpp>
#include <roster/detail/base/file_place.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace roster {

ROSTER_INLINE std::optional<error> refuse_tuning_file_output(std::string_view option, const std::string& path,
                                                             bool site_files_allowed) {
  std::vector<std::string> files;
  if (auto own = tuning_path()) files.push_back(*own);
  if (!site_files_allowed)
    if (auto listed = tuning_paths())
      for (const auto& f : *listed)
        if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  for (const auto& file : files)
    for (const std::string& kept : {file, file + ".lock"}) {
      if (!detail::same_file(path, kept)) continue;
      const bool lock = kept.ends_with(".lock");
      return error(errc::invalid_argument,
                   std::string(option) + " " + detail::printable(path) + " is " +
                       (lock ? "the lock file of roster's tuning file " + detail::printable(file)
                             : "roster's tuning file " + detail::printable(kept)) +
                       "; it is not written over",
                   "name another file for " + std::string(option) + " (a new file, or one of your own)");
    }
  return std::nullopt;
}

ROSTER_INLINE std::optional<expected<void>> write_stream_output(const std::string& path, std::string_view text,
                                                                std::string_view label) {
  const std::string shown = std::string(label) + " " + detail::printable(path);
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
                      shown + " leads to " + detail::printable(hop.empty() ? path : hop) + ", " +
                          (kind.empty() ? std::string("a file under /dev or /proc") : kind) +
                          ", which roster neither replaces nor writes; nothing is written",
                      "name a regular file outside /dev and /proc, or /dev/stdout to write to standard output");
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)  // a FIFO no process reads (a socket says the same)
      return make_error(errc::io, shown + " is " + kind + ", not a regular file; nothing is written to it (no "
                                  "process reads it)",
                        "start the program that reads " + detail::printable(path) +
                            " first (roster does not wait for one), or name a regular file");
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

ROSTER_INLINE expected<void> write_output(const std::string& path, std::string_view text, std::string_view label,
                                         std::string_view place_fix) {
  if (auto streamed = write_stream_output(path, text, label)) return std::move(*streamed);
  return detail::write_file(path, text, label, place_fix);
}

}  // namespace roster
