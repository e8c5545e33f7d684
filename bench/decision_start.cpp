// The first decision's start-up on a GPU node, each measured in a fresh
// process (its wall time from the first call to the device being usable):
//   start_bare_cuda        the CUDA runtime alone: cudaGetDeviceCount,
//                          cudaSetDevice(0), cudaFree(0) (the context): the
//                          start of the one API the job needs (the baseline)
//   start_roster_decision  with ROSTER_DEVICE_SELECTOR='cuda:*': roster::decide()
//                          and roster::acquire of what it chose; the selector
//                          rules the other backends out, so their APIs (the
//                          Vulkan instance, the OpenCL loader) are never started
//                          (shown beside the default row, not judged)
//   start_roster_all       the same with no selector, every backend registered:
//                          the default decision (judged: decision-start-default).
//                          The decision starts only the APIs it needs (the
//                          machine's GPU list comes from NVML and sysfs), so
//                          on an NVIDIA node Vulkan and OpenCL stay unstarted
//   start_runtime_backend  with ROSTER_BASE_DECISION_START naming decision_start
//                          built at 5b22579, the last commit whose CUDA backend
//                          linked the CUDA runtime (before the driver-API
//                          backend): its child run as start_roster_decision's,
//                          the selector 'cuda:*' included (the baseline of
//                          first-device-vs-runtime-backend); left out, with a
//                          line on stderr, where the variable is not set
// They run in turn, in a rotating order, once per repetition.
// usage: decision_start [--benchmark_repetitions=N] [--benchmark_out=FILE]
// With --benchmark_out it writes Google Benchmark's JSON shape (real_time in
// ms), so scripts/bench-check judges it (bench/targets.json: decision-start-cuda).
#include <roster/acquire.hpp>
#include <roster/decide.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct mode {
  const char* name;
  const char* child;     // the argument the child gets
  const char* selector;  // ROSTER_DEVICE_SELECTOR for the child, or nullptr
  const char* program = nullptr;  // the binary run as the child; nullptr: this one
};

// Why start_runtime_backend has no figure when no base build is named: on
// stderr, and as the mode's error in the JSON, which its row then shows.
constexpr const char* base_missing =
    "not run: ROSTER_BASE_DECISION_START is not set. Fix: build bench/decision_start at 5b22579 (the runtime-API "
    "CUDA backend) and name it in ROSTER_BASE_DECISION_START (scripts/gpu-check: GPU_CHECK_BASE_BUILD)";

std::vector<mode> modes_here() {
  std::vector<mode> m = {{"start_bare_cuda", "bare", nullptr},
                         {"start_roster_decision", "roster", "cuda:*"},
                         {"start_roster_all", "roster", nullptr}};
  if (const char* base = std::getenv("ROSTER_BASE_DECISION_START"); base != nullptr && *base != '\0')
    m.push_back({"start_runtime_backend", "roster", "cuda:*", base});
  else
    std::fprintf(stderr, "decision_start: start_runtime_backend %s\n", base_missing);
  return m;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// In the child: times one start and prints "ms spec", or an error and exit 3.
int child(const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  if (std::strcmp(what, "bare") == 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaSetDevice(0) != cudaSuccess ||
        cudaFree(nullptr) != cudaSuccess) {
      std::fprintf(stderr, "decision_start: no CUDA device opens here\n");
      return 3;
    }
    std::printf("%.4f cuda:0\n", since(t0));
    return 0;
  }
  auto d = roster::decide();
  if (!d) return std::fprintf(stderr, "decision_start: %s\n", d.error().message().c_str()), 3;
  const double decided = since(t0);
  auto dev = roster::acquire(d->spec.str());
  if (!dev) return std::fprintf(stderr, "decision_start: %s\n", dev.error().message().c_str()), 3;
  const double opened = since(t0);
  std::printf("%.4f %s\n", opened, d->spec.str().c_str());
  // Where the time went, for the log: the decision, then the open.
  std::string left;
  for (const auto& b : d->not_asked) left += (left.empty() ? "" : ",") + b;
  std::fprintf(stderr, "decision_start: decided %.1f ms, opened %.1f ms later; not asked: %s\n", decided,
               opened - decided, left.empty() ? "none" : left.c_str());
  return 0;
}

// In the parent: runs the child for one mode; its ms, or a negative value.
double run(const char* self, const mode& m, std::string& spec) {
  if (m.selector != nullptr) ::setenv("ROSTER_DEVICE_SELECTOR", m.selector, 1);
  else ::unsetenv("ROSTER_DEVICE_SELECTOR");
  const std::string command = std::string("'") + (m.program != nullptr ? m.program : self) + "' --child " + m.child;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  double ms = -1;
  char got[128] = {};
  if (std::fscanf(p, "%lf %127s", &ms, got) != 2) ms = -1;
  if (::pclose(p) != 0) ms = -1;
  spec = got;
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool write_json(const char* path, const std::vector<mode>& modes, const std::vector<std::vector<double>>& runs) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) return false;
  std::fprintf(out, "{\"context\": {}, \"benchmarks\": [");
  bool first = true;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (std::size_t k = 0; k < modes.size(); ++k) {
      std::fprintf(out,
                   "%s\n {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"repetition_index\": %zu, \"real_time\": %.4f, \"cpu_time\": %.4f, \"time_unit\": \"ms\"}",
                   first ? "" : ",", modes[k].name, modes[k].name, r, runs[r][k], runs[r][k]);
      first = false;
    }
  if (modes.back().program == nullptr)  // no base build named: the row says why it has no baseline
    std::fprintf(out,
                 ",\n {\"name\": \"start_runtime_backend\", \"run_name\": \"start_runtime_backend\", "
                 "\"run_type\": \"iteration\", \"error_occurred\": true, \"error_message\": \"%s\"}",
                 base_missing);
  std::fprintf(out, "\n]}\n");
  return std::fclose(out) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child(argv[2]);
  int reps = 5;
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_repetitions=", 24) == 0) reps = std::atoi(argv[i] + 24);
    else if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) out_path = argv[i] + 16;
  }
  reps = std::max(reps, 1);
  const std::vector<mode> modes = modes_here();
  std::vector<std::vector<double>> runs(reps, std::vector<double>(modes.size()));
  for (int r = 0; r < reps; ++r)
    for (std::size_t j = 0; j < modes.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % modes.size();  // rotate who goes first
      std::string spec;
      runs[r][k] = run(argv[0], modes[k], spec);
      if (runs[r][k] < 0) {
        std::fprintf(stderr, "decision_start: %s failed (above)\nFix: run it on a node where cuda:0 opens.\n",
                     modes[k].name);
        return 2;
      }
      if (k != 0 && spec.rfind("cuda:", 0) != 0) {
        std::fprintf(stderr, "decision_start: %s: the decision chose %s, not a CUDA device\nFix: run it on a node "
                     "whose first circuit is a CUDA GPU, with no tuning records that prefer another API.\n",
                     modes[k].name, spec.c_str());
        return 2;
      }
    }
  std::printf("first start, fresh process each, median of %d (ms):\n", reps);
  std::vector<double> base;
  for (int r = 0; r < reps; ++r) base.push_back(runs[r][0]);
  for (std::size_t k = 0; k < modes.size(); ++k) {
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) v.push_back(runs[r][k]);
    std::printf("  %-24s %8.1f ms  %5.2fx\n", modes[k].name, median(v), median(v) / median(base));
  }
  if (out_path != nullptr && !write_json(out_path, modes, runs)) {
    std::fprintf(stderr, "decision_start: writing %s failed\nFix: give a writable --benchmark_out path.\n", out_path);
    return 2;
  }
  return 0;
}
