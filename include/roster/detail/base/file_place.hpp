#pragma once
// Private: where a path leads. realpath hides what matters for an output a
// user names: /dev/stdout leads through /proc/self/fd/1 to whatever the shell
// opened there (a log opened with >>), and realpath answers with the log.
// So the link chain is walked hop by hop (each hop's folder resolved), and
// every hop is seen: a descriptor alias is written as the stream it is, and
// a path through /dev or /proc is never replaced by rename nor locked beside.

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace roster::detail {

/// Returns path with its folder resolved (realpath) and its last part kept,
/// so that a link in the last part is not followed; path itself when the
/// folder cannot be resolved.
inline std::string folder_resolved(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  const std::string last = slash == std::string::npos ? path : path.substr(slash + 1);
  char* real = ::realpath(folder.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return (out == "/" ? out : out + "/") + last;
}

/// Returns the hops of path's link chain: path (its folder resolved), then
/// each link's target in turn, at most 40. A magic link of /proc that names
/// no path ("pipe:[1234]") ends the chain.
inline std::vector<std::string> link_chain(const std::string& path) {
  std::vector<std::string> hops{folder_resolved(path)};
  for (int i = 0; i < 40; ++i) {
    const std::string& hop = hops.back();
    struct stat st {};
    if (::lstat(hop.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    std::string to(4096, '\0');
    const ssize_t n = ::readlink(hop.c_str(), to.data(), to.size());
    if (n <= 0) break;
    to.resize(static_cast<std::size_t>(n));
    if (!to.starts_with('/')) {
      if (hop.starts_with("/proc/") && to.find(":[") != std::string::npos) break;  // pipe:[N], socket:[N]
      to = hop.substr(0, hop.rfind('/') + 1) + to;
    }
    hops.push_back(folder_resolved(to));
  }
  return hops;
}

/// Returns the first hop of path's link chain under /dev or /proc (a device,
/// a descriptor alias, a kernel file), or empty: no such path is a file
/// roster may replace by rename or make a lock file beside.
inline std::string special_place(const std::string& path) {
  for (const auto& hop : link_chain(path))
    if (hop == "/dev" || hop == "/proc" || hop.starts_with("/dev/") || hop.starts_with("/proc/")) return hop;
  return {};
}

/// Returns the descriptor of this process that path stands for when its
/// chain passes through /proc/PID/fd/N (or /proc/PID/task/TID/fd/N) of this
/// process, which /dev/stdout, /dev/fd/N and /proc/self/fd/N lead to; else -1.
inline int descriptor_alias(const std::string& path) {
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/";
  for (const auto& hop : link_chain(path)) {
    if (!hop.starts_with(self)) continue;
    std::string_view tail = std::string_view(hop).substr(self.size());  // fd/N or task/TID/fd/N
    if (tail.starts_with("task/")) {
      const auto slash = tail.find('/', 5);
      if (slash == std::string_view::npos) continue;
      tail.remove_prefix(slash + 1);
    }
    if (!tail.starts_with("fd/")) continue;
    const std::string number(tail.substr(3));
    if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos) continue;
    return std::atoi(number.c_str());
  }
  return -1;
}

/// Returns whether a and b name one file: the same device and inode where
/// both exist (links followed), else the same path once links are followed
/// as far as they lead and the folder is resolved.
inline bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  return link_chain(a).back() == link_chain(b).back();
}

}  // namespace roster::detail
