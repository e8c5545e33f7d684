// Start-up cost of an inventory: the whole-process wall time of a program
// with 10,000 entries whose main returns at once, against the same program
// with none, run in pairs, interleaved, in this one process. Prints both
// medians, the median of the paired differences and a verdict; exits 1 when
// the difference is over the target.
// usage: inventory_startup EMPTY_PROGRAM FULL_PROGRAM [RUNS] [TARGET_MS]
//        [--benchmark_repetitions=N] [--benchmark_out=FILE]
// With --benchmark_out it also writes Google Benchmark's JSON shape, one
// iteration row per repetition (each RUNS paired runs) for startup_empty,
// startup_10000 and startup_added (the median paired difference), in ms, so
// scripts/bench-check reads it as it reads the other benchmarks.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
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
  std::vector<const char*> pos;
  int reps = 1;
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_repetitions=", 24) == 0) reps = std::atoi(argv[i] + 24);
    else if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) out_path = argv[i] + 16;
    else if (std::strncmp(argv[i], "--benchmark_", 12) == 0) continue;  // format flags: JSON is the only output
    else pos.push_back(argv[i]);
  }
  if (pos.size() < 2 || reps < 1) {
    std::fprintf(stderr,
                 "usage: inventory_startup EMPTY_PROGRAM FULL_PROGRAM [RUNS] [TARGET_MS] "
                 "[--benchmark_repetitions=N] [--benchmark_out=FILE]\n"
                 "Fix: pass the program built with no entries, then the one with 10,000.\n");
    return 2;
  }
  const char* empty = pos[0];
  const char* full = pos[1];
  const int runs = pos.size() > 2 ? std::atoi(pos[2]) : 300;
  const double target = pos.size() > 3 ? std::atof(pos[3]) : 0.1;
  for (int i = 0; i < 20; ++i) {  // warm the page cache and the loader
    if (run_once(empty) < 0 || run_once(full) < 0) {
      std::fprintf(stderr, "inventory_startup: a program failed to run.\nFix: build both programs and run them by hand.\n");
      return 2;
    }
  }
  std::vector<double> e, f, d;
  std::vector<double> rep_e, rep_f, rep_d;  // per repetition: the medians of its runs
  for (int r = 0; r < reps; ++r) {
    std::vector<double> re, rf, rd;
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
      re.push_back(a);
      rf.push_back(b);
      rd.push_back(b - a);
    }
    e.insert(e.end(), re.begin(), re.end());
    f.insert(f.end(), rf.begin(), rf.end());
    d.insert(d.end(), rd.begin(), rd.end());
    rep_e.push_back(median(re));
    rep_f.push_back(median(rf));
    rep_d.push_back(median(rd));
  }
  const double me = median(e), mf = median(f), md = median(d);
  std::printf("start-up wall, median of %d paired interleaved runs:\n", runs * reps);
  std::printf("  no entries (baseline)  %.3f ms  %s\n", me, empty);
  std::printf("  10,000 entries         %.3f ms  %s\n", mf, full);
  std::printf("  paired difference      %+.3f ms  (target <= +%.3f ms)\n", md, target);
  const bool ok = md <= target;
  std::printf("verdict: %s\n", ok ? "PASS" : "FAIL");
  if (out_path != nullptr) {
    std::FILE* out = std::fopen(out_path, "w");
    if (out == nullptr) {
      std::fprintf(stderr, "inventory_startup: cannot write %s\nFix: give a writable --benchmark_out path.\n", out_path);
      return 2;
    }
    std::fprintf(out, "{\"context\": {\"runs_per_repetition\": %d}, \"benchmarks\": [", runs);
    const char* names[] = {"startup_empty", "startup_10000", "startup_added"};
    const std::vector<double>* values[] = {&rep_e, &rep_f, &rep_d};
    bool first = true;
    for (int r = 0; r < reps; ++r)
      for (int k = 0; k < 3; ++k) {
        std::fprintf(out, "%s\n {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                     "\"repetition_index\": %d, \"real_time\": %.6f, \"cpu_time\": %.6f, \"time_unit\": \"ms\"}",
                     first ? "" : ",", names[k], names[k], r, (*values[k])[r], (*values[k])[r]);
        first = false;
      }
    std::fprintf(out, "\n]}\n");
    if (std::fclose(out) != 0) {
      std::fprintf(stderr, "inventory_startup: writing %s failed\nFix: free space where it is written.\n", out_path);
      return 2;
    }
  }
  return ok ? 0 : 1;
}
