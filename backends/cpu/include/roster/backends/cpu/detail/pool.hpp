#pragma once
// Private: the CPU backend's persistent thread pool and its barrier.

#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#endif

namespace roster::cpu::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins briefly, then sleeps on the futex until `word` differs from `old`.
// The spin keeps a dispatch of small programs in the microseconds; the sleep
// keeps idle workers off cores that other processes share.
inline void cpu_wait_while_equal(const std::atomic<std::uint32_t>& word, std::uint32_t old) noexcept {
  for (int i = 0; i < 4000; ++i) {
    if (word.load(std::memory_order_acquire) != old) return;
    cpu_relax();
  }
  while (word.load(std::memory_order_acquire) == old) word.wait(old, std::memory_order_acquire);
}

// A reusable barrier for the pool's threads (a grid_sync inside a program).
class cpu_barrier {
 public:
  explicit cpu_barrier(unsigned n) noexcept : n_(n) {}
  void arrive_and_wait() noexcept {
    if (n_ == 1) return;
    const std::uint32_t gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
    } else {
      cpu_wait_while_equal(generation_, gen);
    }
  }

 private:
  unsigned n_;
  alignas(64) std::atomic<std::uint32_t> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> generation_{0};
};

// n threads: the caller of run() is thread 0, n - 1 workers wait for jobs.
class cpu_pool {
 public:
  using job_fn = void (*)(void* context, unsigned thread) noexcept;

  // Starts the workers; throws std::system_error if a thread cannot start
  // (the device's open() turns that into an error).
  explicit cpu_pool(unsigned n) : n_(n == 0 ? 1 : n), barrier_(n_) {
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

  // Runs job(context, t) for every thread t, the caller as t = 0, and
  // returns when all are done. One run at a time (the device serialises).
  void run(job_fn job, void* context) noexcept {
    if (workers_.empty()) {
      job(context, 0);
      return;
    }
    job_ = job;
    context_ = context;
    pending_.store(static_cast<std::uint32_t>(workers_.size()), std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    epoch_.notify_all();
    job(context, 0);
    for (std::uint32_t left; (left = pending_.load(std::memory_order_acquire)) != 0;)
      cpu_wait_while_equal(pending_, left);
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
      cpu_wait_while_equal(epoch_, seen);
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

  unsigned n_;
  std::vector<std::thread> workers_;
  job_fn job_ = nullptr;
  void* context_ = nullptr;
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  cpu_barrier barrier_;
};

}  // namespace roster::cpu::detail
