// Stress, bounded in time: 64 threads ask get_device(spec) under several
// spellings, list circuits, dispatch on the shared CPU device and acquire
// their own, while one more thread opens and closes a backend plugin in a
// loop. Every answer is checked; the counts are printed. The TSan build of
// scripts/test runs it. ROSTER_STRESS_SECONDS (default 3) and
// ROSTER_STRESS_THREADS (default 64) bound it. The suite runs each CPU device
// on one thread (ROSTER_CPU_THREADS=1): on an oversubscribed CI machine a
// two-thread pool makes every dispatch wait for a time slice, and the count
// of iterations, not the pool, is what this test is after.
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char* plugin_path = ROSTER_STRESS_PLUGIN;
constexpr const char* plugin_backend = "test_registry_backend_plugin";

double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return end != v && x > 0 ? x : fallback;
}

struct counts {
  std::atomic<long> lookups{0}, listings{0}, dispatches{0}, acquires{0}, failures{0};
};

void fail(counts& c, const std::string& what) {
  if (c.failures++ < 10) ADD_FAILURE() << what;
}

TEST(stress, threads_use_roster_while_a_plugin_is_opened_and_closed) {
  const double seconds = env_number("ROSTER_STRESS_SECONDS", 3);
  const int threads = static_cast<int>(env_number("ROSTER_STRESS_THREADS", 64));

  // Warm up, and check the plugin comes and goes, before the race starts.
  auto cpu = roster::get_device("cpu");
  ASSERT_TRUE(cpu.has_value()) << cpu.error().message();
  ASSERT_TRUE(roster::circuits().has_value());
  ASSERT_FALSE(roster::get_device("nosuch:1").has_value());
  {
    auto p = roster::load_plugin(plugin_path);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    ASSERT_NE(roster::find_backend(plugin_backend), nullptr);
    auto ok = roster::unload_plugin(*p);
    ASSERT_TRUE(ok.has_value()) << ok.error().message();
    ASSERT_EQ(roster::find_backend(plugin_backend), nullptr);
  }

  counts c;
  std::atomic<bool> stop{false};
  std::atomic<long> plugin_cycles{0};
  std::latch start(threads + 1);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      roster::device* shared = *cpu;
      constexpr std::size_t n = 256;
      auto a = shared->allocate<double>(n), b = shared->allocate<double>(n), r = shared->allocate<double>(1);
      if (!a || !b || !r) return fail(c, "allocate on the shared CPU device failed");
      const char* spellings[] = {"cpu", "CPU", " cpu:0 ", "Cpu:0", "cpu:00"};
      std::vector<double> host(n);
      start.arrive_and_wait();
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        switch ((k + i) % 4) {
          case 0: {
            auto d = roster::get_device(spellings[i % 5]);
            if (!d || *d != shared) fail(c, std::string("get_device('") + spellings[i % 5] + "') gave another answer");
            auto none = roster::get_device("nosuch:1");
            if (none || none.error().fix().empty()) fail(c, "get_device('nosuch:1') did not fail with a Fix:");
            ++c.lookups;
            break;
          }
          case 1: {
            auto list = roster::circuits();
            if (!list || list->empty()) fail(c, "circuits() failed or is empty");
            else if (list->back().type() != roster::device_type::cpu) fail(c, "no CPU circuit");
            if (roster::primary() == nullptr) fail(c, "no primary circuit");
            ++c.listings;
            break;
          }
          case 2: {
            roster::program p;
            p.fill(*b, static_cast<double>(k)).triad(*a, *b, *b, 2.0).grid_sync().dot(*r, *a, *b);
            if (!shared->dispatch(p)) fail(c, "dispatch failed");
            else if (!shared->download<double>(*a, host) || host[n - 1] != 3.0 * k) fail(c, "wrong triad result");
            else if (std::vector<double> dot(1); !shared->download<double>(*r, dot) || dot[0] != 3.0 * k * k * n)
              fail(c, "wrong dot result");
            ++c.dispatches;
            break;
          }
          case 3: {
            auto own = roster::acquire("cpu");
            if (!own) {
              fail(c, "acquire('cpu') failed: " + own.error().message());
              break;
            }
            auto x = (*own)->allocate<float>(64);
            roster::program p;
            if (x) p.fill(*x, 1.5f);
            std::vector<float> back(64);
            if (!x || !(*own)->dispatch(p) || !(*own)->download<float>(*x, back) || back[63] != 1.5f)
              fail(c, "a freshly acquired CPU device did not run a fill");
            ++c.acquires;
            break;
          }
        }
      }
      for (auto* buf : {&*a, &*b, &*r}) (void)shared->release(*buf);
    });
  }
  std::thread plugins([&] {
    start.arrive_and_wait();
    while (!stop.load(std::memory_order_relaxed)) {
      auto p = roster::load_plugin(plugin_path);
      if (!p) {
        fail(c, "load_plugin failed: " + p.error().message());
        break;
      }
      if (roster::find_backend(plugin_backend) == nullptr) fail(c, "the plugin's backend is not registered");
      if (auto ok = roster::unload_plugin(*p); !ok) {
        fail(c, "unload_plugin failed: " + ok.error().message());
        break;
      }
      if (roster::find_backend(plugin_backend) != nullptr) fail(c, "the plugin's backend stayed registered");
      ++plugin_cycles;
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  plugins.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const long total = c.lookups + c.listings + c.dispatches + c.acquires;
  std::printf("stress: %d threads, %ld iterations in %.1f s (get_device %ld, circuits %ld, dispatch %ld, acquire %ld); "
              "plugin opened and closed %ld times; %ld failures\n",
              threads, total, took, c.lookups.load(), c.listings.load(), c.dispatches.load(), c.acquires.load(),
              plugin_cycles.load(), c.failures.load());
  EXPECT_EQ(c.failures.load(), 0);
  EXPECT_GT(c.lookups.load(), 0);
  EXPECT_GT(c.listings.load(), 0);
  EXPECT_GT(c.dispatches.load(), 0);
  EXPECT_GT(c.acquires.load(), 0);
  EXPECT_GT(plugin_cycles.load(), 0);
}

// Readers of the registry while one thread opens and closes the plugin. The
// entries point into the plugin's memory: without unload_plugin's grace
// period (it waits for every backends_in_use that may have seen them) these
// readers read unmapped memory (SIGSEGV in 3 runs out of 3, 3 s each, on the
// development machine, before it existed). Each reader holds a pin across its
// use of the entries, calls into the plugin's enumerator, and also asks the
// calls that pin themselves (find_backend, acquire's error path).
TEST(stress, registry_readers_while_a_plugin_is_closed) {
  const double seconds = env_number("ROSTER_STRESS_SECONDS", 3);
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, seen{0}, cycles{0}, failures{0};
  std::vector<std::thread> readers;
  for (int k = 0; k < 8; ++k)
    readers.emplace_back([&, k] {
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        if ((k + i) % 3 == 0) {
          roster::backends_in_use pin;
          std::size_t chars = 0;
          for (const auto& b : roster::registered_backends()) {
            chars += b.id().size();
            if (b.id() != plugin_backend) continue;
            auto list = roster::enumerate_adapters(*b.registration);
            if (!list || list->size() != 1 || (*list)[0].name != "stress plugin") ++failures;
            ++seen;
          }
          if (chars == 0) ++failures;
        } else if ((k + i) % 3 == 1) {
          (void)roster::find_backend(plugin_backend);
        } else {
          // The error lists every known backend, the plugin's too while it is loaded.
          auto none = roster::acquire("nosuch:0");
          if (none || none.error().fix().empty()) ++failures;
        }
        ++reads;
      }
    });
  std::thread plugins([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      auto p = roster::load_plugin(plugin_path);
      if (!p) {
        ++failures;
        break;
      }
      // Loaded for a while, so that readers see it even where dlopen and
      // dlclose are slow (ASan).
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (auto ok = roster::unload_plugin(*p); !ok) {
        ++failures;
        break;
      }
      ++cycles;
    }
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : readers) t.join();
  plugins.join();
  std::printf("stress: %ld registry reads (%ld saw the plugin and called its enumerator) while the plugin was "
              "opened and closed %ld times\n",
              reads.load(), seen.load(), cycles.load());
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(seen.load(), 0);
  EXPECT_GT(cycles.load(), 0);
  EXPECT_EQ(roster::find_backend(plugin_backend), nullptr);
}

// A thread that holds a pin cannot unload: it would wait for itself. It gets
// an error with a Fix, the plugin stays, and the unload works once the pin ends.
TEST(stress, unload_inside_a_pin_is_an_error) {
  auto p = roster::load_plugin(plugin_path);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  {
    roster::backends_in_use pin;
    roster::backends_in_use nested;
    auto refused = roster::unload_plugin(*p);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code(), roster::errc::invalid_argument);
    EXPECT_NE(refused.error().message().find("backends_in_use"), std::string::npos);
    EXPECT_FALSE(refused.error().fix().empty());
    EXPECT_NE(roster::find_backend(plugin_backend), nullptr);
  }
  auto ok = roster::unload_plugin(*p);
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(roster::find_backend(plugin_backend), nullptr);
}

}  // namespace
