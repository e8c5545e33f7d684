#pragma once
// Runs a test's body in a forked child: its exit status comes back, a child
// that died of a signal (SIGABRT from an uncaught std::bad_alloc) is 128 +
// the signal, and -1 means the fork or the wait failed. With as_nobody, a
// root parent's child first becomes uid/gid 65534 (exit 3 when it cannot).

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace test_support {

template <class Body>
int in_child(Body body, bool as_nobody = false) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (as_nobody && ::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    const int code = body();
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace test_support
