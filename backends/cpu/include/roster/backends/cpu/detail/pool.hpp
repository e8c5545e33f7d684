#pragma once
// Private: the CPU backend's persistent thread pool and its barrier.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#endif

namespace roster::cpu::detail {

// Partition of [0, blocks) among threads: contiguous, as even as possible.
// The two ends take no division (with one thread, no part does): a 64-bit
// division costs tens of cycles, which a call over 16 elements notices.
inline std::size_t cpu_block_begin(std::size_t blocks, unsigned t, unsigned threads) noexcept {
  if (t == 0) return 0;
  if (t >= threads) return blocks;
  return blocks * t / threads;
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a waiting thread spins before it sleeps: at least 4000 pauses,
// then up to `budget` more nanoseconds of wall time. The short spin keeps a
// dispatch of small programs in the microseconds; the budget keeps threads
// awake across the imbalance of long jobs (a thread that finished a 6 ms
// pass early and fell asleep starts the next pass a futex wake-up late, and
// on a virtual machine that wake-up is tens of microseconds; threads that
// fell behind make the next pass uneven again); the sleep keeps idle workers
// off cores that other processes share.
struct cpu_spin {
  const std::atomic<std::int64_t>* budget_ns = nullptr;  // null: the short spin only
  std::atomic<std::uint64_t>* sleeps = nullptr;          // counts the futex sleeps, when set
};

// Waits until `word` differs from `old`: spins as `spin` says, then sleeps on
// the futex.
inline void cpu_wait_while_equal(const std::atomic<std::uint32_t>& word, std::uint32_t old,
                                 cpu_spin spin = {}) noexcept {
  for (int i = 0; i < 4000; ++i) {
    if (word.load(std::memory_order_acquire) != old) return;
    cpu_relax();
  }
  const std::int64_t budget = spin.budget_ns ? spin.budget_ns->load(std::memory_order_relaxed) : 0;
  if (budget > 0) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::nanoseconds(budget);
    do {
      for (int i = 0; i < 256; ++i) {
        if (word.load(std::memory_order_acquire) != old) return;
        cpu_relax();
      }
    } while (clock::now() < until);
  }
  while (word.load(std::memory_order_acquire) == old) {
    if (spin.sleeps) spin.sleeps->fetch_add(1, std::memory_order_relaxed);
    word.wait(old, std::memory_order_acquire);
  }
}

// The longest a waiting thread of the pool spins (twice the last job, capped).
inline constexpr std::int64_t cpu_spin_cap_ns = 10'000'000;

// Whether n threads fit on the CPUs this process may run on: if they do not,
// a spinning thread takes a core another one needs, and waits sleep at once.
inline bool cpu_threads_fit(unsigned n) noexcept {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  return static_cast<unsigned>(CPU_COUNT(&set)) >= n;
}

// A reusable barrier for the pool's threads (a grid_sync inside a program).
class cpu_barrier {
 public:
  explicit cpu_barrier(unsigned n, cpu_spin spin = {}) noexcept : n_(n), spin_(spin) {}
  void arrive_and_wait() noexcept {
    if (n_ == 1) return;
    const std::uint32_t gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
    } else {
      cpu_wait_while_equal(generation_, gen, spin_);
    }
  }

 private:
  unsigned n_;
  cpu_spin spin_;
  alignas(64) std::atomic<std::uint32_t> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
};

// n threads: the caller of run() is thread 0, n - 1 workers wait for jobs.
class cpu_pool {
 public:
  using job_fn = void (*)(void* context, unsigned thread) noexcept;

  // Starts the workers; throws std::system_error if a thread cannot start
  // (the device's open() turns that into an error).
  explicit cpu_pool(unsigned n)
      : n_(n == 0 ? 1 : n), fits_(cpu_threads_fit(n_)), barrier_(n_, cpu_spin{&spin_ns_, &sleeps_}) {
    workers_.reserve(n_ - 1);
    try {
      for (unsigned t = 1; t < n_; ++t) workers_.emplace_back([this, t] { work(t); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~cpu_pool() { stop(); }
  cpu_pool(const cpu_pool&) = delete;
  cpu_pool& operator=(const cpu_pool&) = delete;

  unsigned size() const noexcept { return n_; }
  cpu_barrier& barrier() noexcept { return barrier_; }

  // Futex sleeps taken by the pool's waits so far (the caller's wait for the
  // workers, the workers' waits for a job, the barrier).
  std::uint64_t sleeps() const noexcept { return sleeps_.load(std::memory_order_relaxed); }
  // How long a wait spins before it sleeps, from the last job: twice its wall
  // time, at most cpu_spin_cap_ns; 0 when the threads do not fit the CPUs.
  std::int64_t spin_budget_ns() const noexcept { return spin_ns_.load(std::memory_order_relaxed); }

  // Runs job(context, t) for every thread t, the caller as t = 0, and
  // returns when all are done. One run at a time (the device serialises).
  void run(job_fn job, void* context) noexcept {
    if (workers_.empty()) {
      job(context, 0);
      return;
    }
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    job_ = job;
    context_ = context;
    pending_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    epoch_.notify_all();
    job(context, 0);
    for (std::uint32_t left; (left = pending_.load(std::memory_order_acquire)) != 0;)
      cpu_wait_while_equal(pending_, left, spin());
    if (fits_) {
      const std::int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
      spin_ns_.store(std::min(2 * took, cpu_spin_cap_ns), std::memory_order_relaxed);
    }
  }

  // Runs fn(t) on every thread (fn must not throw).
  template <class F>
  void run_each(F& fn) noexcept {
    run([](void* c, unsigned t) noexcept { (*static_cast<F*>(c))(t); }, &fn);
  }

 private:
  void work(unsigned t) noexcept {
    std::uint32_t seen = 0;
    for (;;) {
      cpu_wait_while_equal(epoch_, seen, spin());
      seen = epoch_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      job_(context_, t);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
    }
  }
  void stop() noexcept {
    stop_.store(true, std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_release);
    epoch_.notify_all();
    for (auto& w : workers_)
      if (w.joinable()) w.join();
    workers_.clear();
  }

  cpu_spin spin() noexcept { return {&spin_ns_, &sleeps_}; }

  unsigned n_;
  bool fits_;
  std::vector<std::thread> workers_;
  job_fn job_ = nullptr;
  void* context_ = nullptr;
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> spin_ns_{0};
  std::atomic<std::uint64_t> sleeps_{0};
  cpu_barrier barrier_;
};

}  // namespace roster::cpu::detail
