// The inventory: lookup after freeze against a function-local static vector
// returned as a span, and the first collection against building and sorting
// a vector of the same pointers; each baseline runs in this binary.
// Linked with ROSTER_BENCH_ENTRIES generated gen_item entries.
#include <benchmark/benchmark.h>

#include <roster/inventory.hpp>

#include <algorithm>
#include <span>
#include <vector>

#include "gen_item.hpp"

namespace {

// Lookup: what a caller pays on every call once the inventory is frozen.
[[gnu::noinline]] std::span<const gen_item* const> inventory_lookup() noexcept {
  return roster::inventory<gen_item>();
}

std::vector<const gen_item*> copy_of_inventory() {
  auto s = roster::inventory<gen_item>();
  return {s.begin(), s.end()};
}

// The baseline: a function-local static vector, returned as a span.
[[gnu::noinline]] std::span<const gen_item* const> static_vector_lookup() {
  static const std::vector<const gen_item*> v = copy_of_inventory();
  return v;
}

void lookup_inventory(benchmark::State& state) {
  for (auto _ : state) {
    auto s = inventory_lookup();
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(s.size());
  }
}
void lookup_static_vector_baseline(benchmark::State& state) {
  for (auto _ : state) {
    auto s = static_vector_lookup();
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(s.size());
  }
}

// First collection: drop the snapshot (test hook), collect again.
void first_collection(benchmark::State& state) {
  (void)roster::inventory<gen_item>();
  for (auto _ : state) {
    roster::detail::invalidate_for_testing();
    auto s = roster::inventory<gen_item>();
    benchmark::DoNotOptimize(s.data());
  }
  auto s = roster::inventory<gen_item>();
  if (s.size() != ROSTER_BENCH_ENTRIES) state.SkipWithError("wrong entry count");
  state.counters["entries"] = static_cast<double>(s.size());
  state.counters["collect_ns_reported"] = static_cast<double>(roster::inventory_info<gen_item>().collect_ns);
}

// The baseline: the same pointers, in section order, copied into a reserved
// vector and sorted by key: what a registry built at start-up would do.
void sort_vector_baseline(benchmark::State& state) {
  const auto& pointers = *new std::vector<const gen_item*>([] {
    auto v = copy_of_inventory();
    std::sort(v.begin(), v.end(), [](const gen_item* a, const gen_item* b) { return a->check < b->check; });
    return v;
  }());  // a fixed unsorted order; never freed
  for (auto _ : state) {
    std::vector<const gen_item*> v;
    v.reserve(pointers.size());
    v.insert(v.end(), pointers.begin(), pointers.end());
    std::sort(v.begin(), v.end(), [](const gen_item* a, const gen_item* b) { return a->key() < b->key(); });
    benchmark::DoNotOptimize(v.data());
  }
}

}  // namespace

BENCHMARK(lookup_inventory);
BENCHMARK(lookup_static_vector_baseline);
BENCHMARK(first_collection)->Unit(benchmark::kMicrosecond);
BENCHMARK(sort_vector_baseline)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
