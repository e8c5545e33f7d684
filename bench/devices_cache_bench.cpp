// roster::get_device(spec) on a hit, from 1 to 16 threads, against the design
// it replaces: a std::shared_mutex around a std::unordered_map. Both normalize
// the spec with the same allocation-free code and look up without allocating,
// so the difference is the lock and the table. get_device_hit asks in the
// spelling the cache opened the device with (the usual repeated call);
// get_device_hit_other_spelling in one it has not seen, which it normalizes.

#include "../tests/support/identity_device.hpp"
#include <roster/acquire.hpp>
#include <roster/device.hpp>

#include <benchmark/benchmark.h>

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

BENCHMARK(get_device_hit)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(get_device_hit_other_spelling)->ThreadRange(1, 16)->UseRealTime();
BENCHMARK(shared_mutex_map_hit)->ThreadRange(1, 16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
