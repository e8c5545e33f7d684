// Start-up cost of an inventory: the whole-process wall time of a program
// with 10,000 entries whose main returns at once, against the same program
// with none, run in pairs, interleaved, in this one process. Prints both
// medians, the median of the paired differences and a verdict; exits 1 when
// the difference is over the target.
// usage: inventory_startup EMPTY_PROGRAM FULL_PROGRAM [RUNS] [TARGET_MS]
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

extern char** environ;

namespace {

double now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Returns the wall time of one run in ms, or a negative value if it failed.
double run_once(const char* path) {
  char* argv[] = {const_cast<char*>(path), nullptr};
  const double start = now_ms();
  pid_t pid = 0;
  if (posix_spawn(&pid, path, nullptr, nullptr, argv, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  const double wall = now_ms() - start;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? wall : -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: inventory_startup EMPTY_PROGRAM FULL_PROGRAM [RUNS] [TARGET_MS]\n"
                 "Fix: pass the program built with no entries, then the one with 10,000.\n");
    return 2;
  }
  const char* empty = argv[1];
  const char* full = argv[2];
  const int runs = argc > 3 ? std::atoi(argv[3]) : 300;
  const double target = argc > 4 ? std::atof(argv[4]) : 0.1;
  for (int i = 0; i < 20; ++i) {  // warm the page cache and the loader
    if (run_once(empty) < 0 || run_once(full) < 0) {
      std::fprintf(stderr, "inventory_startup: a program failed to run.\nFix: build both programs and run them by hand.\n");
      return 2;
    }
  }
  std::vector<double> e, f, d;
  for (int i = 0; i < runs; ++i) {
    // Alternate which one goes first so neither always gets the warmer run.
    double a, b;
    if (i % 2 == 0) {
      a = run_once(empty);
      b = run_once(full);
    } else {
      b = run_once(full);
      a = run_once(empty);
    }
    if (a < 0 || b < 0) return 2;
    e.push_back(a);
    f.push_back(b);
    d.push_back(b - a);
  }
  const double me = median(e), mf = median(f), md = median(d);
  std::printf("start-up wall, median of %d paired interleaved runs:\n", runs);
  std::printf("  no entries (baseline)  %.3f ms  %s\n", me, empty);
  std::printf("  10,000 entries         %.3f ms  %s\n", mf, full);
  std::printf("  paired difference      %+.3f ms  (target <= +%.3f ms)\n", md, target);
  const bool ok = md <= target;
  std::printf("verdict: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
