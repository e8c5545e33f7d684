// roster::get_device(spec) on a hit, from 1 to 16 threads, against the design
// it replaces: a std::shared_mutex around a std::unordered_map. Both normalize
// the spec with the same allocation-free code and look up without allocating,
// so the difference is the lock and the table. get_device_hit asks in the
// spelling the cache opened the device with (the usual repeated call);
// get_device_hit_other_spelling in one it has not seen, which it normalizes.
//
// cache_resident_memory records the process's resident memory as distinct
// specs are opened (up to 10,000 in all, each run adding to the last): the
// bytes per spec must stay flat, as memory grows linearly with the specs
// (it grew with their square when every new spec copied the whole table).
// cache_rescan_resident: 20,000 rescan() + circuits() must not grow it.

#include "../tests/support/identity_device.hpp"
#include <roster/acquire.hpp>
#include <roster/device_cache.hpp>
#include <roster/detail/backend/spec_key.hpp>

#include <roster/circuits.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace {

using bench_device = roster_test_support::identity_device;

roster::expected<std::unique_ptr<roster::device>> open_bench(std::uint32_t ordinal) {
  roster::adapter_info a;
  a.backend = "bench_cache";
  a.ordinal = ordinal;
  return std::unique_ptr<roster::device>(std::make_unique<bench_device>(a));
}

// The spec every iteration asks for, written as a user might; the cache saw
// this spelling when it opened the device.
constexpr std::string_view spec = "Bench_Cache:3";
// The same device in a spelling the cache has not seen: normalized on each call.
constexpr std::string_view other_spelling = " BENCH_CACHE:03";
// Other specs in the cache, so neither table holds a single entry.
constexpr int other_specs = 15;

bool setup_roster() {
  static const bool ok = [] {
    if (!roster::register_factory("bench_cache", &open_bench, nullptr)) return false;
    if (!roster::get_device(spec)) return false;
    for (int i = 0; i < other_specs + 1; ++i)
      if (!roster::get_device("bench_cache:" + std::to_string(i))) return false;
    return true;
  }();
  return ok;
}

// The baseline: reader-writer lock around a hash map (heterogeneous lookup,
// so a hit does not allocate either).
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
struct locked_cache {
  std::shared_mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<roster::device>, string_hash, std::equal_to<>> map;

  roster::expected<roster::device*> get(std::string_view text) {
    char buffer[roster::detail::spec_key_capacity];
    const std::size_t n = roster::detail::normalize_spec_into(text, buffer);
    const std::string_view key(buffer, n);
    {
      std::shared_lock lock(mutex);
      if (auto it = map.find(key); it != map.end()) return it->second.get();
    }
    std::unique_lock lock(mutex);
    auto [it, inserted] = map.try_emplace(std::string(key));
    if (inserted) {
      auto d = roster::acquire(key);
      if (!d) return std::move(d).error();
      it->second = std::move(*d);
    }
    return it->second.get();
  }
};
locked_cache& baseline() {
  static locked_cache c;
  static const bool filled = [] {
    for (int i = 0; i < other_specs + 1; ++i) (void)c.get("bench_cache:" + std::to_string(i));
    return true;
  }();
  (void)filled;
  return c;
}

void get_device_hit(benchmark::State& state) {
  if (!setup_roster()) {
    state.SkipWithError("could not register the bench backend");
    return;
  }
  for (auto _ : state) {
    auto d = roster::get_device(spec);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}

void get_device_hit_other_spelling(benchmark::State& state) {
  if (!setup_roster()) {
    state.SkipWithError("could not register the bench backend");
    return;
  }
  for (auto _ : state) {
    auto d = roster::get_device(other_spelling);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}

void shared_mutex_map_hit(benchmark::State& state) {
  if (!setup_roster()) {
    state.SkipWithError("could not register the bench backend");
    return;
  }
  auto& c = baseline();
  for (auto _ : state) {
    auto d = c.get(spec);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}

// Resident memory of this process in bytes.
double resident_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * 4096.0;
}

roster::expected<std::unique_ptr<roster::device>> open_memory(std::uint32_t ordinal) {
  roster::adapter_info a;
  a.backend = "bench_memory";
  a.ordinal = ordinal;
  return std::unique_ptr<roster::device>(std::make_unique<bench_device>(a));
}

void cache_resident_memory(benchmark::State& state) {
  static const bool registered = static_cast<bool>(roster::register_factory("bench_memory", &open_memory, nullptr));
  static int opened = 0;  // distinct specs opened so far, over every run
  if (!registered) {
    state.SkipWithError("could not register the memory bench backend");
    return;
  }
  const int total = static_cast<int>(state.range(0));
  double before = 0, after = 0;
  int added = 0;
  for (auto _ : state) {
    before = resident_bytes();
    for (; opened < total; ++opened, ++added)
      if (!roster::get_device("bench_memory:" + std::to_string(opened))) {
        state.SkipWithError("a spec did not open");
        return;
      }
    after = resident_bytes();
  }
  state.counters["specs"] = opened;
  state.counters["resident_MB"] = after / 1e6;
  state.counters["bytes_per_new_spec"] = added > 0 ? (after - before) / added : 0;
}

void cache_rescan_resident(benchmark::State& state) {
  double before = 0, after = 0;
  for (auto _ : state) {
    before = resident_bytes();
    for (int i = 0; i < 20000; ++i) {
      roster::rescan();
      benchmark::DoNotOptimize(roster::circuits());
    }
    after = resident_bytes();
  }
  state.counters["growth_KB"] = (after - before) / 1e3;
}

BENCHMARK(get_device_hit)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(get_device_hit_other_spelling)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(shared_mutex_map_hit)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(cache_resident_memory)->Arg(250)->Arg(1000)->Arg(2000)->Arg(5000)->Arg(10000)->Iterations(1);
BENCHMARK(cache_rescan_resident)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
