#pragma once
/// The CPU backend: a multithreaded device that runs every op for float and
/// double on the host, registered as backend "cpu".
///
/// Including this header registers the backend (one entry however many
/// translation units include it), so it works header-only too; in a compiled
/// build, link roster_cpu with link_whole (Meson's roster_cpu_dep does).

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/native.hpp>
#include <roster/kernels.hpp>
#include <roster/program.hpp>
#include <roster/backends/cpu/native.hpp>
#include <roster/backends/cpu/detail/kernels.hpp>
#include <roster/backends/cpu/detail/pool.hpp>
#include <roster/backends/cpu/detail/slots.hpp>

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace roster::cpu {

/// Bytes every buffer is aligned to (a cache line).
inline constexpr std::size_t buffer_alignment = 64;
/// Elements per block: the unit of the thread partition and of fusion.
inline constexpr std::size_t block_elements = 2048;
/// Largest thread count ROSTER_CPU_THREADS accepts.
inline constexpr unsigned max_threads = 4096;

/// Returns ROSTER_CPU_THREADS when set (a whole number from 1 to max_threads;
/// anything else is an error), else the CPUs this process may run on.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<unsigned> thread_count();
/// Returns the host's CPU as an adapter, with compute_units = threads.
[[nodiscard]] ROSTER_API ROSTER_INLINE adapter_info host_adapter(unsigned threads);

namespace detail {
// The built-in ops' entry points: the backend's own loops over a part [b, e)
// of the index space, so a call that reaches the entry point runs what the
// fused path runs. A dispatch maps a call of a built-in entry onto the fused
// path itself; these serve callers of the entry point (a tuning reference, a
// user's own code).
template <class T>
void builtin_fill(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_fill(a.data<T>(0) + b, a.scalar<T>(0), e - b);
}
template <class T>
void builtin_copy(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_copy(a.data<T>(0) + b, a.data<const T>(1) + b, e - b);
}
template <class T>
void builtin_mul(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_mul(a.data<T>(0) + b, a.data<const T>(1) + b, a.scalar<T>(0), e - b);
}
template <class T>
void builtin_add(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_add(a.data<T>(0) + b, a.data<const T>(1) + b, a.data<const T>(2) + b, e - b);
}
template <class T>
void builtin_triad(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_triad(a.data<T>(0) + b, a.data<const T>(1) + b, a.data<const T>(2) + b, a.scalar<T>(0), e - b);
}
template <class T>
void builtin_nstream(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  cpu_nstream(a.data<T>(0) + b, a.data<const T>(1) + b, a.data<const T>(2) + b, a.scalar<T>(0), e - b);
}
// r[0] = the sum over [b, e): the whole dot when called on the whole index
// space (a reduction has no per-part form; the fused path sums the threads').
template <class T>
void builtin_dot(const kernel_args& a, std::size_t b, std::size_t e) noexcept {
  a.data<T>(0)[0] = static_cast<T>(cpu_dot(a.data<const T>(1) + b, a.data<const T>(2) + b, e - b));
}
// A barrier has nothing to run: the pool's run returns when every thread is done.
template <class T>
void builtin_grid_sync(const kernel_args&, std::size_t, std::size_t) noexcept {}
}  // namespace detail

/// A CPU entry point: a function run on the pool's threads, each over its
/// part [begin, end) of the call's index space (roster::host_kernel_fn).
using kernel_fn = host_kernel_fn;

/// Returns a CPU kernel entry with signature P... and entry point Fn, for
/// ROSTER_KERNEL: `constinit const roster::kernel_entry e =
/// roster::cpu::kernel<&axpy<double>, roster::read_write<double>, ...>("axpy",
/// "plain", roster::default_variant); ROSTER_KERNEL(e);`
template <kernel_fn Fn, class... P>
constexpr kernel_entry kernel(std::string_view op, std::string_view variant, bool is_default) noexcept {
  return kernel_entry_of<P...>(op, "cpu", variant, is_default, payload_of(&host_kernel_of<Fn>));
}

namespace detail {
template <class E, kernel_fn Fn, class... P>
constexpr kernel_entry kernel_for(std::string_view op, std::string_view variant, bool is_default) noexcept {
  return roster::detail::kernel_entry_for<E, P...>(op, "cpu", variant, is_default, payload_of(&host_kernel_of<Fn>));
}
}  // namespace detail

struct backend;

/// A live CPU device: owns a persistent thread pool and 64-byte aligned
/// buffers. Open one through roster::acquire("cpu") (ROSTER_CPU_THREADS sets
/// its threads); roster::native<roster::cpu::native>(dev) gives this class.
class ROSTER_API device final : public roster::device {
 public:
  ROSTER_INLINE ~device() override;

  /// Returns the host CPU adapter.
  [[nodiscard]] const adapter_info& adapter() const noexcept override { return adapter_; }
  /// Returns native grid sync, double support and every op.
  [[nodiscard]] device_caps caps() const noexcept override { return {true, true, op_set::all()}; }
  /// Returns at once: dispatch runs to completion before it returns.
  [[nodiscard]] expected<void> synchronize() override { return {}; }
  /// Runs validated steps: fused passes between grid_syncs, a barrier at each.
  [[nodiscard]] ROSTER_INLINE expected<void> dispatch_steps(std::span<const step> steps) override;
  /// Returns the number of threads the device runs on.
  [[nodiscard]] unsigned threads() const noexcept { return pool_.size(); }
  /// Sets the bytes a one-step segment must move (all its arrays) before its
  /// stores bypass the cache; the default is the last-level cache's size.
  ROSTER_INLINE void set_streaming_threshold(std::size_t bytes) noexcept;
  /// Returns the bytes above which stores bypass the cache.
  [[nodiscard]] ROSTER_INLINE std::size_t streaming_threshold() const noexcept;
  /// Whether the plain (cached) loops run their AVX2 copy: on by default
  /// where the build targets the x86-64 baseline and the CPU has AVX2.
  [[nodiscard]] ROSTER_INLINE bool wide_loops() const noexcept;
  /// Turns the AVX2 copy on or off; returns whether it is now on (never
  /// where the build or the CPU lacks it). Both give the same bits.
  ROSTER_INLINE bool set_wide_loops(bool on) noexcept;
  /// Returns the address of a live buffer's memory, or null.
  [[nodiscard]] ROSTER_INLINE const void* address(const buffer& b) const noexcept;

  /// Runs CPU kernel `fn` (a callable of cpu_kernel_fn's signature that does
  /// not throw) over [0, extent) on the pool, each thread a contiguous part,
  /// with these buffers, each checked live on this device; serialised with
  /// dispatches, and done when it returns. The static kernel call's path.
  template <class F>
  [[nodiscard]] expected<void> run_kernel(const F& fn, std::span<const buffer> buffers,
                                          std::span<const scalar_arg> scalars, std::size_t extent) {
    call_arguments arguments;
    std::lock_guard lock(mutex_);
    auto args = arguments.build(buffers, scalars, extent,
                                [&](const buffer& b) { return b.owner == id() ? data_of(b) : nullptr; });
    if (!args) return std::move(args).error().prepend(adapter_.spec());
    const unsigned threads = pool_.size();
    auto part = [&](unsigned t) noexcept {
      const std::size_t lo = detail::cpu_block_begin(extent, t, threads), hi = detail::cpu_block_begin(extent, t + 1, threads);
      if (lo < hi) fn(*args, lo, hi);
    };
    pool_.run_each(part);
    return {};
  }

  friend struct cpu::backend;                    // opens it
  friend struct roster::detail::static_access;  // direct liveness check in static dispatch
  friend expected<void> detail::run_on_pool(cpu::device*, detail::thread_fn, void*);  // native run_on_threads
  friend void detail::pool_barrier(cpu::device*) noexcept;                           // native barrier

 protected:
  [[nodiscard]] ROSTER_INLINE expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override;
  [[nodiscard]] ROSTER_INLINE expected<void> do_release(std::uint32_t slot) override;
  [[nodiscard]] ROSTER_INLINE bool owns(const buffer& b) const noexcept override;
  [[nodiscard]] ROSTER_INLINE expected<void> do_upload(const buffer& b, const void* src) override;
  [[nodiscard]] ROSTER_INLINE expected<void> do_download(const buffer& b, void* dst) override;
  [[nodiscard]] ROSTER_INLINE expected<bool> do_native(std::uint64_t kind, void* out) override;
  [[nodiscard]] ROSTER_INLINE expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override;

 private:
  /// Opens a device running on `threads` threads (the caller counts as one).
  [[nodiscard]] static ROSTER_INLINE expected<std::unique_ptr<device>> open(unsigned threads);
  // Runs fn on every thread under the dispatch lock; a throw becomes an error.
  ROSTER_INLINE expected<void> run_on_threads(detail::thread_fn fn, void* context);
  ROSTER_INLINE device(unsigned threads, adapter_info info);
  ROSTER_INLINE void* data_of(const buffer& b) const noexcept;
  // Refuses an allocation of `bytes` larger than the memory available.
  [[nodiscard]] ROSTER_INLINE expected<void> check_room(std::size_t bytes, std::size_t n, element_type t) const;
  ROSTER_INLINE void copy_parts(char* to, const char* from, const buffer& b) noexcept;
  template <class T>
  expected<void> run(std::span<const step> steps);
  ROSTER_INLINE expected<void> run_builtin(std::span<const step> steps);
  ROSTER_INLINE expected<void> run_call(const kernel_call& c);

  adapter_info adapter_;
  detail::cpu_pool pool_;
  mutable std::mutex mutex_;     // guards slots_ and serialises dispatches
  detail::cpu_slots slots_;      // buffers by handle: indices reused, a released handle never matches again
  std::vector<double> partials_;  // dot partial sums, one cache line per thread and dot step
  std::size_t streaming_threshold_ = 0;
  bool wide_loops_ = false;
};

/// The backend type ROSTER_REGISTER_BACKEND registers.
struct backend {
  static constexpr std::string_view id = "cpu";
  static constexpr int rank = 100;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = cpu::device;
  /// Its users' kernels are host functions (roster::cpu::kernel).
  using kernel_payload = host_kernel;
  /// Returns the entry point of built-in op `o` over T: the backend's own loop.
  template <class T>
  static constexpr roster::kernel_payload builtin_payload(op o) noexcept {
    switch (o) {
      case op::fill: return payload_of(&host_kernel_of<&detail::builtin_fill<T>>);
      case op::copy: return payload_of(&host_kernel_of<&detail::builtin_copy<T>>);
      case op::mul: return payload_of(&host_kernel_of<&detail::builtin_mul<T>>);
      case op::add: return payload_of(&host_kernel_of<&detail::builtin_add<T>>);
      case op::triad: return payload_of(&host_kernel_of<&detail::builtin_triad<T>>);
      case op::nstream: return payload_of(&host_kernel_of<&detail::builtin_nstream<T>>);
      case op::dot: return payload_of(&host_kernel_of<&detail::builtin_dot<T>>);
      case op::grid_sync: return payload_of(&host_kernel_of<&detail::builtin_grid_sync<T>>);
      case op::call: break;
    }
    return {};
  }
  /// Opens the host CPU (ordinal 0) on thread_count() threads.
  [[nodiscard]] static ROSTER_INLINE expected<std::unique_ptr<device_type>> open(open_key, std::uint32_t ordinal);
  /// Lists the one CPU adapter.
  [[nodiscard]] ROSTER_API static ROSTER_INLINE expected<std::vector<adapter_info>> enumerate();
};

}  // namespace roster::cpu

ROSTER_REGISTER_BACKEND(roster::cpu::backend);

#define ROSTER_IMPL_CPU_KERNEL(name, op, variant, is_default, fn, ...)                                          \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f32) =                                   \
      ::roster::cpu::detail::kernel_for<float, &fn<float>, __VA_ARGS__>(op, variant, is_default);               \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f64) =                                   \
      ::roster::cpu::detail::kernel_for<double, &fn<double>, __VA_ARGS__>(op, variant, is_default);             \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f32));                                                                   \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f64))

/// Registers CPU kernel template `fn` for float and double: `op` and
/// `variant` are names, `is_default` roster::default_variant or
/// roster::other_variant, then the signature with roster::elem for the
/// element type, e.g. roster::read_write<roster::elem>, roster::scalar<roster::elem>.
#define ROSTER_CPU_KERNEL(op, variant, is_default, fn, ...) \
  ROSTER_IMPL_CPU_KERNEL(ROSTER_IMPL_CAT(roster_cpu_kernel_, __COUNTER__), op, variant, is_default, fn, __VA_ARGS__)


// The out-of-line code, by job: in header-only mode here, in library mode
// compiled once by src/<job>.cpp.
#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cpu/detail/adapters-inl.hpp>
#  include <roster/backends/cpu/detail/device-inl.hpp>
#  include <roster/backends/cpu/detail/dispatch-inl.hpp>
#  include <roster/backends/cpu/detail/memory-inl.hpp>
#  include <roster/backends/cpu/detail/registration-inl.hpp>
#else
// Library mode: the link needs the bodies, from a ROSTER_SOURCE file or the library.
ROSTER_IMPL_NEED_BODIES(cpu);
#endif
