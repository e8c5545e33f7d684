// Compile cost of including roster: the compiler's CPU time (user + system,
// from wait4) and peak memory for `-std=c++20 -O2 -fsyntax-only` of one file
// that includes <roster/roster.hpp> (library mode, the one ROSTER_SOURCE file
// with the core alone and with every backend, and header-only), of the standard headers roster's public headers use (the
// baseline), and of {fmt} header-only where <fmt/format.h> is installed (the
// anchor). The files are
// compiled in turn, in a rotating order, once per repetition.
// usage: compile_cost [--benchmark_repetitions=N] [--benchmark_out=FILE]
// With --benchmark_out it writes Google Benchmark's JSON shape: one iteration
// row per file and repetition, real_time and cpu_time the compiler's CPU time
// in seconds, the counter peak_mib its peak resident memory in MiB, so
// scripts/bench-check reads it as it reads the other benchmarks.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct source {
  const char* name;  // the row's name
  const char* file;  // under ROSTER_COMPILE_COST_SOURCES
};

constexpr source sources[] = {
    {"compile_std_headers", "std_headers.cpp"},
    {"compile_roster_library", "roster_library.cpp"},
    {"compile_roster_header_only", "roster_header_only.cpp"},
    {"compile_roster_source", "roster_source.cpp"},
    {"compile_roster_source_every_backend", "roster_source_every_backend.cpp"},
    {"compile_fmt_header_only", "fmt_header_only.cpp"},
};

struct cost {
  double cpu_s = -1;  // negative when the compiler failed
  double peak_mib = 0;
};

// Compiles one file with -fsyntax-only; the child's CPU time and peak memory.
cost compile(const std::string& file) {
  std::vector<std::string> words = {ROSTER_COMPILE_COST_CXX, "-std=c++20", "-O2", "-fsyntax-only",
                                    "-I" ROSTER_COMPILE_COST_ROOT "/include"};
  for (const char* b : {"cpu", "cuda", "opencl", "vulkan"})
    words.push_back(std::string("-I" ROSTER_COMPILE_COST_ROOT "/backends/") + b + "/include");
  words.push_back(file);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return {};
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  const auto seconds = [](timeval t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {seconds(usage.ru_utime) + seconds(usage.ru_stime), static_cast<double>(usage.ru_maxrss) / 1024.0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Writes the rows in Google Benchmark's JSON shape.
bool write_json(const char* path, const std::vector<std::vector<cost>>& runs, const std::vector<bool>& present) {
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) return false;
  std::fprintf(out, "{\"context\": {\"compiler\": \"%s\"}, \"benchmarks\": [", ROSTER_COMPILE_COST_CXX);
  bool first = true;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (std::size_t k = 0; k < std::size(sources); ++k) {
      if (!present[k]) continue;
      std::fprintf(out,
                   "%s\n {\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"repetition_index\": %zu, \"real_time\": %.4f, \"cpu_time\": %.4f, \"time_unit\": \"s\", "
                   "\"peak_mib\": %.1f}",
                   first ? "" : ",", sources[k].name, sources[k].name, r, runs[r][k].cpu_s, runs[r][k].cpu_s,
                   runs[r][k].peak_mib);
      first = false;
    }
  std::fprintf(out, "\n]}\n");
  return std::fclose(out) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_repetitions=", 24) == 0) reps = std::atoi(argv[i] + 24);
    else if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) out_path = argv[i] + 16;
  }
  if (reps < 1) reps = 1;
  const std::string dir = ROSTER_COMPILE_COST_SOURCES "/";
  // {fmt}'s row only where its header is installed; every other file must compile.
  std::vector<bool> present(std::size(sources), true);
  for (std::size_t k = 0; k < std::size(sources); ++k) {
    if (compile(dir + sources[k].file).cpu_s >= 0) continue;  // also warms the page cache
    if (std::strcmp(sources[k].file, "fmt_header_only.cpp") == 0) {
      std::printf("compile_fmt_header_only: not measured: <fmt/format.h> does not compile here (libfmt-dev)\n");
      present[k] = false;
      continue;
    }
    if (std::strcmp(sources[k].file, "roster_source_every_backend.cpp") == 0) {
      std::printf("compile_roster_source_every_backend: not measured: <vulkan/vulkan.h> or <CL/cl.h> is missing "
                  "here (libvulkan-dev, opencl-headers)\n");
      present[k] = false;
      continue;
    }
    std::fprintf(stderr, "compile_cost: %s%s does not compile with %s\nFix: build roster's tree as it is checked in.\n",
                 dir.c_str(), sources[k].file, ROSTER_COMPILE_COST_CXX);
    return 2;
  }
  std::vector<std::vector<cost>> runs(reps, std::vector<cost>(std::size(sources)));
  for (int r = 0; r < reps; ++r)
    for (std::size_t j = 0; j < std::size(sources); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % std::size(sources);  // rotate who goes first
      if (!present[k]) continue;
      runs[r][k] = compile(dir + sources[k].file);
      if (runs[r][k].cpu_s < 0) return 2;
    }
  std::vector<double> cpu0;
  for (int r = 0; r < reps; ++r) cpu0.push_back(runs[r][0].cpu_s);
  const double base = median(cpu0);
  std::printf("compiler CPU time and peak memory, median of %d (%s -std=c++20 -O2 -fsyntax-only):\n", reps,
              ROSTER_COMPILE_COST_CXX);
  for (std::size_t k = 0; k < std::size(sources); ++k) {
    if (!present[k]) continue;
    std::vector<double> cpu, mib;
    for (int r = 0; r < reps; ++r) cpu.push_back(runs[r][k].cpu_s), mib.push_back(runs[r][k].peak_mib);
    std::printf("  %-36s %6.2f s  %5.2fx  %6.0f MiB\n", sources[k].name, median(cpu), median(cpu) / base, median(mib));
  }
  if (out_path != nullptr && !write_json(out_path, runs, present)) {
    std::fprintf(stderr, "compile_cost: writing %s failed\nFix: give a writable --benchmark_out path.\n", out_path);
    return 2;
  }
  return 0;
}
