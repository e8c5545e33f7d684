#pragma once
/// The CPU backend's native handles: its thread pool and the host memory
/// behind a buffer, for a user's own loops between roster's programs
/// (roster::native<roster::cpu::native>(dev)). <roster/backends/cpu.hpp>
/// includes it; the ordering contract is in docs/native.md.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/native.hpp>
#include <roster/program.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace roster::cpu {

class device;

namespace detail {
/// A function run once on each of the pool's threads.
using thread_fn = void (*)(void* context, unsigned thread, unsigned threads);
/// Runs fn on every thread of dev's pool under its dispatch lock; a throw is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> run_on_pool(cpu::device* dev, thread_fn fn, void* context);
/// Waits at dev's pool barrier.
ROSTER_API ROSTER_INLINE void pool_barrier(cpu::device* dev) noexcept;
}  // namespace detail

/// The CPU backend's native handles (roster::native<roster::cpu::native>(dev)):
/// its thread pool. Buffers give their host memory
/// (roster::native_buffer<roster::cpu::native>(dev, buf)). docs/native.md.
struct native {
  static constexpr std::uint64_t native_id = native_id_of("roster::cpu::native/1");
  static constexpr std::string_view backend = "cpu";
  /// The host memory of one buffer.
  struct buffer {
    void* data = nullptr;  ///< 64-byte aligned host memory, valid until the buffer is released
    element_type type = element_type::f64;
    std::size_t size = 0;  ///< elements
  };

  cpu::device* dev = nullptr;  ///< the device whose pool this is (not a wrapper around it)
  unsigned threads = 0;        ///< threads of the pool; the caller of run_on_threads is thread 0

  /// Runs fn(thread_index, thread_count) once on each of the pool's threads
  /// and returns when every one has returned: after every earlier dispatch of
  /// the device and before any later one. fn must not call the device; an
  /// exception it throws comes back as an errc::internal error.
  template <class F>
    requires std::invocable<F&, unsigned, unsigned>
  [[nodiscard]] expected<void> run_on_threads(F&& fn) const {
    if (dev == nullptr)
      return make_error(errc::invalid_argument, "cpu: run_on_threads: these native handles hold no device",
                        "get them with roster::native<roster::cpu::native>(dev)");
    return detail::run_on_pool(
        dev, [](void* c, unsigned t, unsigned n) { (*static_cast<std::remove_reference_t<F>*>(c))(t, n); },
        const_cast<void*>(static_cast<const volatile void*>(&fn)));
  }
  /// Waits until every thread of the pool has reached this barrier. Call it
  /// only inside run_on_threads' fn, the same number of times on every thread.
  void barrier() const noexcept { detail::pool_barrier(dev); }
};

}  // namespace roster::cpu
