// The CPU backend's own behaviour: thread count and its errors, the adapter's
// identity, aligned memory, native grid sync, and dot's stated accuracy.
#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/kernels.hpp>
#include <roster/backends/cpu/detail/pool.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/cpu_device.hpp"

#include <sched.h>
#include <unistd.h>

#include <limits>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

// Sets ROSTER_CPU_THREADS for one scope, restoring the old value.
struct scoped_threads {
  explicit scoped_threads(const char* value) {
    if (const char* old = std::getenv("ROSTER_CPU_THREADS")) saved = old;
    if (value != nullptr) setenv("ROSTER_CPU_THREADS", value, 1);
    else unsetenv("ROSTER_CPU_THREADS");
  }
  ~scoped_threads() {
    if (saved) setenv("ROSTER_CPU_THREADS", saved->c_str(), 1);
    else unsetenv("ROSTER_CPU_THREADS");
  }
  std::optional<std::string> saved;
};

TEST(cpu_threads, bad_values_are_errors_from_open) {
  for (const char* bad : {"abc", "0", "-1", "4x", "1.5", "+2", "99999999999999999999", "5000", "0x4"}) {
    SCOPED_TRACE(std::string("ROSTER_CPU_THREADS='") + bad + "'");
    scoped_threads env(bad);
    auto d = roster::acquire("cpu");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::invalid_argument);
    EXPECT_NE(d.error().message().find(std::string("ROSTER_CPU_THREADS='") + bad + "'"), std::string::npos)
        << d.error().message();
    EXPECT_NE(d.error().message().find("a whole number from 1 to 4096"), std::string::npos) << d.error().message();
    expect_fix(d.error());
    auto listed = roster::cpu::backend::enumerate();
    ASSERT_FALSE(listed);
    expect_fix(listed.error());
  }
}

// Blank is unset, as roster::env reads every variable: every CPU of the mask.
TEST(cpu_threads, a_blank_value_means_unset) {
  unsigned unset = 0;
  {
    scoped_threads env(nullptr);
    auto n = roster::cpu::thread_count();
    ASSERT_TRUE(n) << n.error().message();
    unset = *n;
  }
  for (const char* blank : {"", " ", "\t"}) {
    scoped_threads env(blank);
    auto n = roster::cpu::thread_count();
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, unset);
  }
}

TEST(cpu_threads, good_values_set_the_thread_count) {
  for (auto [text, want] : {std::pair{"1", 1u}, std::pair{"3", 3u}, std::pair{" 2 ", 2u}, std::pair{"007", 7u}}) {
    scoped_threads env(text);
    auto d = roster_test::open_cpu_device();
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ((*d)->threads(), want);
    EXPECT_EQ((*d)->adapter().compute_units, want);
  }
}

TEST(cpu_threads, unset_means_every_cpu_of_the_affinity_mask) {
  scoped_threads env(nullptr);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  auto n = roster::cpu::thread_count();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, static_cast<unsigned>(CPU_COUNT(&set)));
  // Bound to one CPU (as an MPI launcher may bind a rank), it runs one thread.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) {
      CPU_SET(c, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  auto bound = roster::cpu::thread_count();
  ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
  ASSERT_TRUE(bound);
  EXPECT_EQ(*bound, 1u);
}

TEST(cpu_adapter, identity_read_from_the_system) {
  auto list = roster::cpu::backend::enumerate();
  ASSERT_TRUE(list) << list.error().message();
  ASSERT_EQ(list->size(), 1u);
  const auto& a = list->front();
  EXPECT_EQ(a.backend, "cpu");
  EXPECT_EQ(a.ordinal, 0u);
  EXPECT_EQ(a.spec(), "cpu:0");
  EXPECT_EQ(a.type, roster::device_type::cpu);
  EXPECT_FALSE(a.name.empty());
  EXPECT_GT(a.memory_bytes, std::uint64_t{1} << 26);
  EXPECT_TRUE(a.pci_address.empty());
  EXPECT_TRUE(a.native_grid_sync);
  EXPECT_EQ(a.ops, roster::op_set::all());
  // Stable: the same UUID on every call (a hash of /etc/machine-id, or zero).
  auto again = roster::cpu::backend::enumerate();
  EXPECT_EQ(again->front().uuid, a.uuid);
  std::ifstream id("/etc/machine-id");
  std::string text;
  if (id >> text) {
    EXPECT_TRUE(a.has_uuid());
    EXPECT_EQ(a.uuid[6] >> 4, 8);  // version 8
    // Case 33 (docs/hostile.md): a CPU's identity printed as "GPU-f3d350a8-...",
    // NVIDIA's label for its GPUs. It is the plain UUID text.
    const std::string u = a.uuid_string();
    EXPECT_FALSE(u.starts_with("GPU-")) << u;
    EXPECT_EQ(u.size(), 36u) << u;
    EXPECT_EQ(u[8], '-') << u;
  } else {
    EXPECT_FALSE(a.has_uuid());
  }
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)->adapter().uuid, a.uuid);
  EXPECT_EQ((*d)->adapter().name, a.name);
}

TEST(cpu_device, native_grid_sync_means_no_split_unless_forced) {
  auto native = roster::acquire("cpu", {.force_split = false});
  ASSERT_TRUE(native);
  EXPECT_TRUE((*native)->caps().native_grid_sync);
  EXPECT_NE(dynamic_cast<roster::cpu::device*>(native->get()), nullptr);
  auto split = roster::acquire("cpu", {.force_split = true});
  ASSERT_TRUE(split);
  EXPECT_FALSE((*split)->caps().native_grid_sync);
  EXPECT_NE(dynamic_cast<roster::grid_sync_split<roster::device>*>(split->get()), nullptr);
}

TEST(cpu_device, buffers_are_64_byte_aligned_and_zeroed) {
  auto d = roster_test::open_cpu_device();
  ASSERT_TRUE(d);
  for (std::size_t n : {1, 3, 17, 1000, 100003}) {
    auto f = (*d)->allocate<float>(n);
    auto g = (*d)->allocate<double>(n);
    ASSERT_TRUE(f && g);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>((*d)->address(*f)) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>((*d)->address(*g)) % 64, 0u);
    std::vector<double> host(n, 1.0);
    ASSERT_TRUE((*d)->download(*g, std::span<double>(host)));
    for (double x : host) ASSERT_EQ(x, 0.0);
  }
  auto released = *(*d)->allocate<float>(4);
  ASSERT_TRUE((*d)->release(released));
  EXPECT_EQ((*d)->address(released), nullptr);
}

TEST(cpu_device, runs_on_many_threads_with_odd_sizes) {
  scoped_threads env("7");
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d);
  for (std::size_t n : {1, 5, 2048 * 7 - 1, 2048 * 7 + 1, 100003}) {
    auto a = *(*d)->allocate<double>(n), b = *(*d)->allocate<double>(n), r = *(*d)->allocate<double>(1);
    roster::program p;
    p.fill(a, 1.5).fill(b, 2).grid_sync().dot(r, a, b);
    ASSERT_TRUE((*d)->dispatch(p));
    std::vector<double> got(1);
    ASSERT_TRUE((*d)->download(r, std::span<double>(got)));
    EXPECT_EQ(got[0], 3.0 * static_cast<double>(n));
  }
}

// The CPU backend's dot accumulates in double, for float buffers too:
//   |dot - exact| <= n * 2^-53 * sum |a_i b_i|  (+ 2^-24 |exact| for the final rounding to float).
TEST(cpu_dot, float_dot_accumulates_in_double) {
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d);
  const std::size_t n = (std::size_t{1} << 16) + 7;
  std::vector<float> a(n, 1.0f), b(n, 1.0f);
  a[0] = 16777216.0f;  // 2^24: a float accumulator would drop every later 1
  auto da = *(*d)->allocate<float>(n), db = *(*d)->allocate<float>(n), r = *(*d)->allocate<float>(1);
  ASSERT_TRUE((*d)->upload(da, std::span<const float>(a)));
  ASSERT_TRUE((*d)->upload(db, std::span<const float>(b)));
  roster::program p;
  p.dot(r, da, db);
  ASSERT_TRUE((*d)->dispatch(p));
  std::vector<float> got(1);
  ASSERT_TRUE((*d)->download(r, std::span<float>(got)));
  EXPECT_EQ(got[0], 16777216.0f + static_cast<float>(n - 1));
}

template <class T>
void dot_meets_stated_bound() {
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::size_t n : {1, 2, 3, 1000, (1 << 16) + 7, 1 << 20}) {
    std::vector<T> a(n), b(n);
    for (auto& x : a) x = static_cast<T>(dist(rng));
    for (auto& x : b) x = static_cast<T>(dist(rng));
    auto da = *(*d)->allocate<T>(n), db = *(*d)->allocate<T>(n), r = *(*d)->allocate<T>(1);
    ASSERT_TRUE((*d)->upload(da, std::span<const T>(a)));
    ASSERT_TRUE((*d)->upload(db, std::span<const T>(b)));
    roster::program p;
    p.dot(r, da, db);
    ASSERT_TRUE((*d)->dispatch(p));
    std::vector<T> got(1);
    ASSERT_TRUE((*d)->download(r, std::span<T>(got)));
    long double exact = 0, mag = 0;
    for (std::size_t i = 0; i < n; ++i) {
      exact += static_cast<long double>(a[i]) * b[i];
      mag += std::fabs(static_cast<long double>(a[i]) * b[i]);
    }
    const double u = std::ldexp(1.0, -53);
    const double final_rounding = std::is_same_v<T, float> ? std::ldexp(1.0, -24) : 0.0;
    const double bound = static_cast<double>(n) * u * static_cast<double>(mag) * 1.01 +
                         final_rounding * std::fabs(static_cast<double>(exact));
    EXPECT_LE(std::fabs(static_cast<double>(got[0]) - static_cast<double>(exact)), bound) << "n = " << n;
    for (auto x : {da, db, r}) ASSERT_TRUE((*d)->release(x));
  }
}
TEST(cpu_dot, float_meets_stated_bound) { dot_meets_stated_bound<float>(); }
TEST(cpu_dot, double_meets_stated_bound) { dot_meets_stated_bound<double>(); }

// Streaming (cache-bypassing) stores run where a one-step segment moves more
// than the threshold; with the threshold at 0 every size takes that path,
// including unaligned heads and tails, and must give the plain path's values.
template <class T>
void streaming_matches_plain() {
  auto streaming = roster_test::open_cpu_device();
  auto plain = roster_test::open_cpu_device();
  ASSERT_TRUE(streaming && plain);
  (*streaming)->set_streaming_threshold(0);
  (*plain)->set_streaming_threshold(std::size_t{1} << 62);
  EXPECT_EQ((*streaming)->streaming_threshold(), 0u);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::size_t n : {1, 3, 7, 17, 2047, 4096 + 5, 100003}) {
    std::vector<T> ha(n), hb(n), hc(n);
    for (auto* v : {&ha, &hb, &hc})
      for (auto& x : *v) x = static_cast<T>(dist(rng));
    std::vector<std::vector<T>> results[2];
    int k = 0;
    for (auto* d : {streaming->get(), plain->get()}) {
      auto a = *d->template allocate<T>(n), b = *d->template allocate<T>(n), c = *d->template allocate<T>(n);
      ASSERT_TRUE(d->upload(a, std::span<const T>(ha)));
      ASSERT_TRUE(d->upload(b, std::span<const T>(hb)));
      ASSERT_TRUE(d->upload(c, std::span<const T>(hc)));
      std::vector<roster::program> ps(5);
      ps[0].copy(c, a);
      ps[1].mul(b, c, 0.75);
      ps[2].add(c, a, b);
      ps[3].triad(a, b, c, 1.25);
      ps[4].fill(b, -2.5);
      for (const auto& p : ps) {
        ASSERT_TRUE(d->dispatch(p));
        std::vector<T> out(n);
        const roster::buffer& target = p.steps()[0].out;
        ASSERT_TRUE(d->download(target, std::span<T>(out)));
        results[k].push_back(out);
      }
      ++k;
    }
    for (std::size_t p = 0; p < results[0].size(); ++p)
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(results[0][p][i], results[1][p][i], 4 * std::numeric_limits<T>::epsilon())
            << "program " << p << " n = " << n << " i = " << i;
  }
}
TEST(cpu_device, streaming_stores_match_plain_float) { streaming_matches_plain<float>(); }
TEST(cpu_device, streaming_stores_match_plain_double) { streaming_matches_plain<double>(); }

// The AVX2 copy's 32-byte streaming loop gives the 16-byte loop's bits for
// each op it has, from every offset within a cache line (its scalar head)
// and with odd tails; it declines the ops it has no loop for.
template <class T>
void wide_streaming_matches_narrow() {
#if !defined(__SSE2__)
  GTEST_SKIP() << "no streaming stores on this architecture";
#else
  namespace cd = roster::cpu::detail;
  if (!cd::cpu_has_wide_streaming || (cd::cpu_has_wide_clone && !cd::cpu_wide_loops_available()))
    GTEST_SKIP() << "this build or CPU has no AVX2 streaming loop";
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  const std::size_t room = 4096 + 64;
  std::vector<T> a(room), b(room), wide(room), narrow(room);
  for (auto* v : {&a, &b})
    for (auto& x : *v) x = static_cast<T>(dist(rng));
  const T s = static_cast<T>(1.25);
  using roster::op;
  for (op kind : {op::fill, op::copy, op::mul, op::add, op::triad})
    for (std::size_t offset = 0; offset < 64 / sizeof(T); ++offset)
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{33}, std::size_t{4096 - 3}}) {
        T* w = wide.data() + offset;
        T* o = narrow.data() + offset;
        ASSERT_TRUE(cd::cpu_stream_wide(kind, w, a.data() + offset, b.data() + offset, s, n));
        switch (kind) {
          case op::fill: cd::cpu_fill_stream(o, s, n); break;
          case op::copy: cd::cpu_copy_stream(o, a.data() + offset, n); break;
          case op::mul: cd::cpu_mul_stream(o, a.data() + offset, s, n); break;
          case op::add: cd::cpu_add_stream(o, a.data() + offset, b.data() + offset, n); break;
          default: cd::cpu_triad_stream(o, a.data() + offset, b.data() + offset, s, n); break;
        }
        cd::cpu_stream_fence();
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(w[i], o[i]) << to_string(kind) << " offset " << offset << " n " << n << " i " << i;
      }
  for (op kind : {op::nstream, op::dot})
    EXPECT_FALSE(cd::cpu_stream_wide(kind, wide.data(), a.data(), b.data(), s, 64)) << to_string(kind);
#endif
}
TEST(cpu_device, wide_streaming_matches_narrow_float) { wide_streaming_matches_narrow<float>(); }
TEST(cpu_device, wide_streaming_matches_narrow_double) { wide_streaming_matches_narrow<double>(); }

// The AVX2 copy of the plain loops gives the baseline loops' bits, op by op
// and fused, on odd sizes.
template <class T>
void wide_matches_baseline() {
  auto wide = roster_test::open_cpu_device(3);
  auto base = roster_test::open_cpu_device(3);
  ASSERT_TRUE(wide && base);
  for (auto* d : {wide->get(), base->get()}) d->set_streaming_threshold(std::size_t{1} << 62);
  EXPECT_FALSE((*base)->set_wide_loops(false));
  if (!(*wide)->wide_loops()) GTEST_SKIP() << "this build or CPU has no AVX2 copy of the loops";
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  for (std::size_t n : {1, 3, 17, 2047, 4096 + 5, 100003}) {
    std::vector<T> ha(n), hb(n), hc(n);
    for (auto* v : {&ha, &hb, &hc})
      for (auto& x : *v) x = static_cast<T>(dist(rng));
    std::vector<std::vector<T>> results[2];
    int k = 0;
    for (auto* d : {wide->get(), base->get()}) {
      auto a = *d->template allocate<T>(n), b = *d->template allocate<T>(n), c = *d->template allocate<T>(n);
      auto r = *d->template allocate<T>(1);
      ASSERT_TRUE(d->upload(a, std::span<const T>(ha)));
      ASSERT_TRUE(d->upload(b, std::span<const T>(hb)));
      ASSERT_TRUE(d->upload(c, std::span<const T>(hc)));
      std::vector<roster::program> ps(8);
      ps[0].copy(c, a);
      ps[1].mul(b, c, 0.75);
      ps[2].add(c, a, b);
      ps[3].triad(a, b, c, 1.25);
      ps[4].nstream(a, b, c, 0.5);
      ps[5].dot(r, a, b);
      ps[6].fill(b, -2.5);
      ps[7].copy(c, a).mul(b, c, 0.3).add(c, a, b).triad(a, b, c, 0.7).dot(r, a, c);  // one fused pass
      for (const auto& p : ps) {
        ASSERT_TRUE(d->dispatch(p));
        const roster::buffer& target = p.steps().back().out;
        std::vector<T> out(target.size);
        ASSERT_TRUE(d->download(target, std::span<T>(out)));
        results[k].push_back(out);
      }
      ++k;
    }
    for (std::size_t p = 0; p < results[0].size(); ++p)
      for (std::size_t i = 0; i < results[0][p].size(); ++i)
        ASSERT_EQ(results[0][p][i], results[1][p][i]) << "program " << p << " n = " << n << " i = " << i;
  }
}
TEST(cpu_device, wide_loops_match_baseline_float) { wide_matches_baseline<float>(); }
TEST(cpu_device, wide_loops_match_baseline_double) { wide_matches_baseline<double>(); }

TEST(cpu_device, wide_loops_are_on_where_the_cpu_has_avx2) {
  auto d = roster_test::open_cpu_device(1);
  ASSERT_TRUE(d);
#if ROSTER_CPU_WIDE_CLONE
  // A baseline x86-64 build carries the AVX2 copy and runs it where it can.
  EXPECT_TRUE(roster::cpu::detail::cpu_has_wide_clone);
  EXPECT_EQ((*d)->wide_loops(), __builtin_cpu_supports("avx2") != 0);
#else
  EXPECT_FALSE((*d)->wide_loops());  // one copy: the compiler's flags chose its width
#endif
  EXPECT_FALSE((*d)->set_wide_loops(false));
  EXPECT_FALSE((*d)->wide_loops());
  EXPECT_EQ((*d)->set_wide_loops(true), roster::cpu::detail::cpu_wide_loops_available());
}

TEST(cpu_device, streaming_threshold_defaults_to_the_last_level_cache) {
  auto d = roster_test::open_cpu_device();
  ASSERT_TRUE(d);
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  EXPECT_EQ((*d)->streaming_threshold(), llc > 0 ? static_cast<std::size_t>(llc) : std::size_t{32} << 20);
}

std::size_t process_threads() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
  return n;
}

TEST(cpu_device, pool_is_persistent_and_owned_by_the_device) {
  scoped_threads env("4");
  const std::size_t before = process_threads();
  {
    auto d = roster::acquire("cpu");
    ASSERT_TRUE(d);
    EXPECT_EQ(process_threads(), before + 3);  // the caller is the fourth
    auto a = *(*d)->allocate<double>(100000), r = *(*d)->allocate<double>(1);
    roster::program p;
    p.fill(a, 1).grid_sync().dot(r, a, a);
    for (int k = 0; k < 20; ++k) ASSERT_TRUE((*d)->dispatch(p));
    EXPECT_EQ(process_threads(), before + 3);  // no thread started per dispatch
  }
  // Closing the device joins its workers. The kernel wakes a joiner when a thread has cleared its id, a moment
  // before it takes the thread out of /proc/self/task, so a joined worker may still be listed briefly: wait for
  // the count for up to 5 s. A worker that was not joined stays listed and fails this.
  std::size_t after = process_threads();
  for (int k = 0; k < 500 && after != before; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = process_threads();
  }
  EXPECT_EQ(after, before);
}

TEST(cpu_device, dispatch_from_several_threads_is_serialised) {
  auto d = roster::acquire("cpu");
  ASSERT_TRUE(d);
  const std::size_t n = 50000;
  std::vector<std::thread> users;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    users.emplace_back([&, t] {
      auto a = *(*d)->allocate<double>(n), r = *(*d)->allocate<double>(1);
      roster::program p;
      p.fill(a, t + 1).grid_sync().dot(r, a, a);
      for (int k = 0; k < 20; ++k) {
        if (!(*d)->dispatch(p)) return;
        std::vector<double> got(1);
        if (!(*d)->download(r, std::span<double>(got))) return;
        if (got[0] != (t + 1.0) * (t + 1.0) * n) return;
      }
      ok[t] = 1;
    });
  for (auto& u : users) u.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
}

// ---- the pool's waits ------------------------------------------------------

// Busy-waits (never sleeps) for d of wall time.
void busy_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) roster::cpu::detail::cpu_relax();
}

// A job whose thread 1 works 2 ms while thread 0 (the caller) returns at
// once: the caller waits about 2 ms for the worker every time.
void uneven_job(roster::cpu::detail::cpu_pool& pool) {
  auto job = [](unsigned t) noexcept {
    if (t == 1) busy_for(std::chrono::microseconds(2000));
  };
  pool.run_each(job);
}

TEST(cpu_pool, the_budget_is_twice_the_last_job) {
  if (!roster::cpu::detail::cpu_threads_fit(2)) GTEST_SKIP() << "needs 2 CPUs in the affinity mask";
  roster::cpu::detail::cpu_pool pool(2);
  EXPECT_EQ(pool.spin_budget_ns(), 0);  // no job yet: the short spin only
  uneven_job(pool);                     // takes at least 2 ms
  EXPECT_GE(pool.spin_budget_ns(), 2 * 2'000'000);
  EXPECT_LE(pool.spin_budget_ns(), roster::cpu::detail::cpu_spin_cap_ns);
}

// Counts the futex sleeps of one wait that another thread ends after 20 ms.
std::uint64_t sleeps_of_a_20ms_wait(std::int64_t budget_ns) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::int64_t> budget{budget_ns};
  std::atomic<std::uint64_t> sleeps{0};
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    word.store(1, std::memory_order_release);
    word.notify_all();
  });
  roster::cpu::detail::cpu_wait_while_equal(word, 0, {&budget, &sleeps});
  waker.join();
  EXPECT_EQ(word.load(), 1u);
  return sleeps.load();
}

TEST(cpu_pool, a_wait_spins_through_its_budget_before_it_sleeps) {
  // A budget longer than the wait: it ends while the thread still spins.
  EXPECT_EQ(sleeps_of_a_20ms_wait(2'000'000'000), 0u);
  // No budget: 4000 pauses, far less than 20 ms, then the futex.
  EXPECT_GE(sleeps_of_a_20ms_wait(0), 1u);
}

TEST(cpu_pool, spin_budget_is_capped) {
  if (!roster::cpu::detail::cpu_threads_fit(2)) GTEST_SKIP() << "needs 2 CPUs in the affinity mask";
  roster::cpu::detail::cpu_pool pool(2);
  auto job = [](unsigned t) noexcept {
    if (t == 0) busy_for(std::chrono::microseconds(12000));
  };
  pool.run_each(job);
  EXPECT_EQ(pool.spin_budget_ns(), roster::cpu::detail::cpu_spin_cap_ns);
}

TEST(cpu_pool, more_threads_than_cpus_sleep_at_once) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const unsigned cpus = static_cast<unsigned>(CPU_COUNT(&set));
  roster::cpu::detail::cpu_pool pool(cpus + 1);
  EXPECT_FALSE(roster::cpu::detail::cpu_threads_fit(cpus + 1));
  uneven_job(pool);
  uneven_job(pool);
  // Oversubscribed: a spinning thread would take a core another one needs.
  EXPECT_EQ(pool.spin_budget_ns(), 0);
}

}  // namespace
