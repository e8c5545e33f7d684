#pragma once
// Private: the CPU device's life and memory: opening it on a pool of
// threads, its settings, buffers (the slot table, the check against the
// memory available), transfers and native handles.

#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/memory.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>

namespace roster::cpu {

ROSTER_INLINE device::device(unsigned threads, adapter_info info)
    : adapter_(std::move(info)), pool_(threads), wide_loops_(detail::cpu_wide_loops_available()) {
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  streaming_threshold_ = llc > 0 ? static_cast<std::size_t>(llc) : std::size_t{32} << 20;
}

ROSTER_INLINE void device::set_streaming_threshold(std::size_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  streaming_threshold_ = bytes;
}

ROSTER_INLINE std::size_t device::streaming_threshold() const noexcept {
  std::lock_guard lock(mutex_);
  return streaming_threshold_;
}

ROSTER_INLINE bool device::set_wide_loops(bool on) noexcept {
  std::lock_guard lock(mutex_);
  wide_loops_ = on && detail::cpu_wide_loops_available();
  return wide_loops_;
}

ROSTER_INLINE bool device::wide_loops() const noexcept {
  std::lock_guard lock(mutex_);
  return wide_loops_;
}

ROSTER_INLINE device::~device() {
  slots_.for_each_live([](const detail::cpu_memory& m) { ::operator delete(m.data, std::align_val_t{buffer_alignment}); });
}

ROSTER_INLINE expected<std::unique_ptr<device>> device::open(unsigned threads) {
  if (threads == 0 || threads > max_threads)
    return make_error(errc::invalid_argument, "cpu:0: " + std::to_string(threads) + " threads requested",
                      "ask for 1 to " + std::to_string(max_threads) + " threads");
  try {
    return std::unique_ptr<device>(new device(threads, host_adapter(threads)));
  } catch (const std::system_error& e) {
    return make_error(errc::unavailable,
                      "cpu:0: could not start " + std::to_string(threads) + " threads: " + std::string(e.what()),
                      "lower ROSTER_CPU_THREADS, or raise the process's thread limit (ulimit -u)");
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, "cpu:0: out of memory while opening the device",
                      "free memory or lower ROSTER_CPU_THREADS");
  }
}

ROSTER_INLINE void* device::data_of(const buffer& b) const noexcept {
  const detail::cpu_memory* m = slots_.find(b.slot);
  return m != nullptr && m->type == b.type && m->size == b.size ? m->data : nullptr;
}

ROSTER_INLINE const void* device::address(const buffer& b) const noexcept {
  if (b.owner != id()) return nullptr;
  std::lock_guard lock(mutex_);
  return data_of(b);
}

ROSTER_INLINE bool device::owns(const buffer& b) const noexcept {
  std::lock_guard lock(mutex_);
  return data_of(b) != nullptr;
}

ROSTER_INLINE expected<void> device::check_room(std::size_t bytes, std::size_t n, element_type t) const {
  if (bytes < detail::checked_allocation_bytes) return {};
  const auto room = detail::host_available_memory();
  if (!room || bytes <= room->bytes) return {};
  return make_error(errc::out_of_memory,
                    adapter_.spec() + ": allocate: " + std::to_string(n) + " " + std::string(to_string(t)) +
                        " elements need " + detail::memory_text(bytes) + ", more than the " +
                        detail::memory_text(room->bytes) + " available (" + room->source + ")",
                    "allocate fewer elements, release buffers you no longer need, or free memory on the host "
                    "(a batch job: ask the scheduler for more memory); roster refuses an allocation the host "
                    "cannot hold rather than let the kernel's out-of-memory killer end the process");
}

ROSTER_INLINE expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  const std::size_t esize = size_of(t);
  const std::size_t bytes = (n * esize + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
  if (auto ok = check_room(bytes, n, t); !ok) return std::move(ok).error();
  void* p = ::operator new(bytes, std::align_val_t{buffer_alignment}, std::nothrow);
  if (p == nullptr)
    return make_error(errc::out_of_memory,
                      adapter_.spec() + ": allocate: no memory for " + std::to_string(n) + " " +
                          std::string(to_string(t)) + " elements (" + detail::memory_text(bytes) + ")",
                      "free buffers you no longer need, or allocate fewer elements");
  std::lock_guard lock(mutex_);
  std::uint32_t handle = 0;
  bool stored = false;
  try {
    stored = slots_.insert({p, t, n}, handle);
  } catch (const std::bad_alloc&) {
  }
  if (!stored) {
    ::operator delete(p, std::align_val_t{buffer_alignment});
    if (slots_.capacity() < detail::max_live_buffers)
      return make_error(errc::out_of_memory, adapter_.spec() + ": allocate: no memory for the buffer table",
                        "free memory, or release buffers you no longer need");
    return make_error(errc::out_of_memory,
                      adapter_.spec() + ": allocate: the device holds " +
                          std::to_string(detail::max_live_buffers) + " buffers, or has handed out 2^32 in its life",
                      "release buffers you no longer need, or open another device with roster::acquire(\"cpu\")");
  }
  if (bytes < detail::checked_allocation_bytes) {
    std::memset(p, 0, n * esize);  // a few pages: the caller's thread zeroes them at once
    return handle;
  }
  // First touch: zero the pages with the threads and the partition that will
  // compute on them, so each page lands on the NUMA node of its thread.
  const std::size_t blocks = (n + block_elements - 1) / block_elements;
  const unsigned threads = pool_.size();
  auto touch = [&](unsigned th) noexcept {
    const std::size_t lo = detail::cpu_block_begin(blocks, th, threads) * block_elements;
    const std::size_t hi = std::min(n, detail::cpu_block_begin(blocks, th + 1, threads) * block_elements);
    if (lo < hi) std::memset(static_cast<char*>(p) + lo * esize, 0, (hi - lo) * esize);
  };
  pool_.run_each(touch);
  return handle;
}

ROSTER_INLINE expected<void> device::do_release(std::uint32_t slot) {
  std::lock_guard lock(mutex_);
  ::operator delete(slots_.erase(slot).data, std::align_val_t{buffer_alignment});
  return {};
}

ROSTER_INLINE expected<void> device::do_upload(const buffer& b, const void* src) {
  std::lock_guard lock(mutex_);
  copy_parts(static_cast<char*>(data_of(b)), static_cast<const char*>(src), b);
  return {};
}

ROSTER_INLINE expected<void> device::do_download(const buffer& b, void* dst) {
  std::lock_guard lock(mutex_);
  copy_parts(static_cast<char*>(dst), static_cast<const char*>(data_of(b)), b);
  return {};
}

// Copies a buffer's bytes with the pool, each thread the part it computes on.
ROSTER_INLINE void device::copy_parts(char* to, const char* from, const buffer& b) noexcept {
  const std::size_t esize = size_of(b.type), blocks = (b.size + block_elements - 1) / block_elements;
  const unsigned threads = pool_.size();
  auto part = [&](unsigned th) noexcept {
    const std::size_t lo = detail::cpu_block_begin(blocks, th, threads) * block_elements;
    const std::size_t hi = std::min(b.size, detail::cpu_block_begin(blocks, th + 1, threads) * block_elements);
    if (lo < hi) std::memcpy(to + lo * esize, from + lo * esize, (hi - lo) * esize);
  };
  pool_.run_each(part);
}

ROSTER_INLINE expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  *static_cast<native*>(out) = native{this, pool_.size()};
  return true;
}

ROSTER_INLINE expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  std::lock_guard lock(mutex_);
  void* data = data_of(b);
  if (data == nullptr)
    return make_error(errc::invalid_argument, "the buffer was released", "allocate a new buffer");  // roster::native_buffer adds the spec
  *static_cast<native::buffer*>(out) = native::buffer{data, b.type, b.size};
  return true;
}

ROSTER_INLINE expected<void> device::run_on_threads(detail::thread_fn fn, void* context) {
  // The dispatch lock: a dispatch returns only when its work is done, so the
  // user's work runs after every earlier dispatch and before any later one.
  std::lock_guard lock(mutex_);
  const unsigned threads = pool_.size();
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  unsigned first_thread = 0;
  auto job = [&](unsigned t) noexcept {
    try {
      fn(context, t, threads);
    } catch (...) {
      if (!failed.exchange(true, std::memory_order_acq_rel)) {
        first = std::current_exception();
        first_thread = t;
      }
    }
  };
  pool_.run_each(job);
  if (!failed.load(std::memory_order_acquire)) return {};
  std::string what = "an exception";
  try {
    std::rethrow_exception(first);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  return make_error(errc::internal,
                    adapter_.spec() + ": run_on_threads: the callable threw on thread " +
                        std::to_string(first_thread) + ": " + what,
                    "catch exceptions inside the callable (a thread that throws skips the barriers the others wait at)");
}

ROSTER_INLINE expected<void> detail::run_on_pool(cpu::device* dev, thread_fn fn, void* context) {
  return dev->run_on_threads(fn, context);
}

ROSTER_INLINE void detail::pool_barrier(cpu::device* dev) noexcept { dev->pool_.barrier().arrive_and_wait(); }

}  // namespace roster::cpu
