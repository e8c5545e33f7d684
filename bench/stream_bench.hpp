#pragma once
// What the STREAM benchmarks of the GPU APIs share (vulkan_stream_bench,
// opencl_stream_bench): the five ops as one-step programs over one set of
// buffers, each timed with the device's own clock (timed_dispatch), median
// of `runs` runs after a warm-up, and the figures kept for the table each
// program prints last.
#include <roster/acquire.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stream_bench {

struct figure {
  double gbs = 0;
  double median_ms = 0;
};
// (backend, type, op) -> figure
inline std::map<std::string, figure> results;

inline const roster::op stream_ops[] = {roster::op::copy, roster::op::mul, roster::op::add, roster::op::triad,
                                 roster::op::dot};

inline std::string key(std::string_view backend, roster::element_type t, roster::op o) {
  return std::string(backend) + "/" + std::string(roster::to_string(t)) + "/" + std::string(roster::to_string(o));
}

// Buffers of one element type on one device, kept across the ops.
struct stream_set {
  roster::device* device = nullptr;
  roster::element_type type{};
  roster::buffer a, b, c, r;
};

inline roster::program one_op(const stream_set& s, roster::op o) {
  constexpr double scalar = 0.4;
  roster::program p;
  switch (o) {
    case roster::op::copy: p.copy(s.c, s.a); break;
    case roster::op::mul: p.mul(s.b, s.c, scalar); break;
    case roster::op::add: p.add(s.c, s.a, s.b); break;
    case roster::op::triad: p.triad(s.a, s.b, s.c, scalar); break;
    case roster::op::dot: p.dot(s.r, s.a, s.b); break;
    default: break;
  }
  return p;
}

inline void run_op(benchmark::State& state, const stream_set* s, roster::op o, std::string backend, int runs) {
  const roster::program p = one_op(*s, o);
  const double bytes = static_cast<double>(roster::bytes_moved(p.steps()[0]));
  for (auto _ : state) {
    std::vector<double> seconds;
    seconds.reserve(runs);
    for (int i = 0; i < 3; ++i)  // warm-up
      if (auto t = s->device->timed_dispatch(p); !t) {
        state.SkipWithError(t.error().message().c_str());
        return;
      }
    for (int i = 0; i < runs; ++i) {
      auto t = s->device->timed_dispatch(p);
      if (!t) {
        state.SkipWithError(t.error().message().c_str());
        return;
      }
      seconds.push_back(t->seconds());
    }
    std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
    const double median = seconds[seconds.size() / 2];
    state.SetIterationTime(median);
    state.counters["GB/s"] = bytes / median / 1e9;
    state.counters["n"] = static_cast<double>(s->a.size);
    results[key(backend, s->type, o)] = {bytes / median / 1e9, median * 1e3};
  }
}

inline bool parse_flag(const char* arg, const char* name, std::string& out) {
  const std::size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
  out = arg + len + 1;
  return true;
}

// Prints the table: `backend` beside the CUDA baseline, the ratio, and
// whether within 5%.
inline void print_table(const std::string& backend, std::size_t n, bool have_cuda) {
  std::printf("\n| type (n = %zu) | op | %s GB/s |%s\n", n, backend.c_str(), have_cuda ? (" cuda GB/s | " + backend + "/cuda |").c_str() : "");
  std::printf("| --- | --- | --- |%s\n", have_cuda ? " --- | --- |" : "");
  int slower = 0;
  for (auto t : {roster::element_type::f32, roster::element_type::f64})
    for (auto o : stream_ops) {
      auto v = results.find(key(backend, t, o));
      if (v == results.end()) continue;
      std::printf(v->second.gbs < 100 ? "| %s | %s | %.2f |" : "| %s | %s | %.0f |",
                  std::string(roster::to_string(t)).c_str(), std::string(roster::to_string(o)).c_str(), v->second.gbs);
      if (auto c = results.find(key("cuda", t, o)); have_cuda && c != results.end()) {
        const double ratio = v->second.gbs / c->second.gbs;
        if (ratio < 0.95) ++slower;
        std::printf(" %.0f | %.3f%s |", c->second.gbs, ratio, ratio < 0.95 ? " (more than 5% slower)" : "");
      }
      std::printf("\n");
    }
  if (have_cuda) std::printf("ops more than 5%% below CUDA: %d\n", slower);
}

}  // namespace stream_bench
