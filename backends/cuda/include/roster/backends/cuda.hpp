#pragma once
/// The CUDA backend: adapters through the CUDA driver API (libcuda.so.1,
/// opened at run time), and a device that runs a whole program as one
/// cooperative launch where the card allows it, with kernels from a fat
/// image committed to the repository. Needs no CUDA header, nvcc or CUDA
/// library to build, so a .cu file may include it too.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/kernels.hpp>
#include <roster/native.hpp>
#include <roster/backends/cuda/native.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace roster::cuda {

/// A CUDA entry point: a host function, compiled with nvcc, that launches the
/// kernel on `cuda_stream` (a cudaStream_t) and returns without waiting.
using launcher_fn = void (*)(const kernel_args& args, void* cuda_stream);

/// The payload of a CUDA kernel entry: its launcher.
struct launcher {
  static constexpr std::uint64_t payload_id = payload_id_of("roster::cuda::launcher/1");
  launcher_fn fn = nullptr;
};
/// The launcher payload of function Fn, as constinit data.
template <launcher_fn Fn>
inline constexpr launcher launcher_of{Fn};

/// Returns a CUDA kernel entry with signature P... and launcher Fn, for
/// ROSTER_KERNEL (a .cu file may use it: this header needs no CUDA header).
template <launcher_fn Fn, class... P>
constexpr kernel_entry kernel(std::string_view op, std::string_view variant, bool is_default) noexcept {
  return kernel_entry_of<P...>(op, "cuda", variant, is_default, payload_of(&launcher_of<Fn>));
}

/// How a CUDA device runs a program's grid_sync steps and dot reductions.
enum class grid_sync_mode : std::uint8_t {
  native,  ///< one cooperative launch per program, grid-wide sync inside it
  split,   ///< one plain launch per segment; a dot is two launches
};

/// Returns "native" or "split".
constexpr std::string_view to_string(grid_sync_mode m) noexcept { return m == grid_sync_mode::native ? "native" : "split"; }

/// Kernel launches a device has made, by kind (for tests and tuning).
struct launch_counts {
  std::uint64_t cooperative = 0;  ///< cuLaunchCooperativeKernel calls
  std::uint64_t plain = 0;        ///< cuLaunchKernel calls and users' launchers
};

/// Builds an error for a CUDA driver code (a CUresult): the message ends with
/// the code's name and number, e.g. "(CUDA_ERROR_NO_DEVICE, 100)", then the Fix: part.
[[nodiscard]] ROSTER_API ROSTER_INLINE error make_cuda_error(int cuda_code, std::string_view what,
                                                             std::string_view fix);

struct backend;
namespace detail {
struct kernel_set;
}

/// One opened CUDA adapter: buffers from cuMemAlloc in the device's primary
/// context, work on its own stream.
/// Not thread-safe: use one device per thread, or serialise the calls.
class ROSTER_API device final : public roster::device {
 public:
  ROSTER_INLINE ~device() override;
  [[nodiscard]] const adapter_info& adapter() const noexcept override { return info_; }
  [[nodiscard]] ROSTER_INLINE device_caps caps() const noexcept override;
  [[nodiscard]] ROSTER_INLINE expected<void> synchronize() override;
  [[nodiscard]] ROSTER_INLINE expected<void> dispatch_steps(std::span<const step> steps) override;
  [[nodiscard]] ROSTER_INLINE expected<duration_ns> timed_dispatch_steps(std::span<const step> steps) override;

  /// Returns how this device runs grid_sync now.
  [[nodiscard]] grid_sync_mode mode() const noexcept { return mode_; }
  /// Sets how this device runs grid_sync; native needs cooperative-launch support.
  [[nodiscard]] ROSTER_INLINE expected<void> set_mode(grid_sync_mode m);
  /// Returns the launches made so far.
  [[nodiscard]] launch_counts launches() const noexcept { return counts_; }
  /// Returns the device pointer behind a live buffer of this device, or null.
  [[nodiscard]] ROSTER_INLINE void* native_pointer(const buffer& b) const noexcept;
  /// Returns the device's stream (a CUstream, which is a cudaStream_t, as void*), on which all its work runs.
  [[nodiscard]] void* native_stream() const noexcept { return stream_; }

  friend struct backend;  // opens it

 protected:
  ROSTER_INLINE expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override;
  ROSTER_INLINE expected<void> do_release(std::uint32_t slot) override;
  ROSTER_INLINE bool owns(const buffer& b) const noexcept override;
  ROSTER_INLINE expected<void> do_upload(const buffer& b, const void* src) override;
  ROSTER_INLINE expected<void> do_download(const buffer& b, void* dst) override;
  void on_split_wrapped() noexcept override { mode_ = grid_sync_mode::split; }
  ROSTER_INLINE expected<bool> do_native(std::uint64_t kind, void* out) override;
  ROSTER_INLINE expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override;

 private:
  device() = default;
  /// Opens CUDA device `ordinal` (after CUDA_VISIBLE_DEVICES).
  [[nodiscard]] static ROSTER_INLINE expected<std::unique_ptr<device>> open(std::uint32_t ordinal);
  struct slot {
    void* ptr = nullptr;
    element_type type = element_type::f64;
    std::size_t size = 0;
  };
  [[nodiscard]] ROSTER_INLINE expected<void> size_grids();
  [[nodiscard]] ROSTER_INLINE expected<void> ready();
  [[nodiscard]] ROSTER_INLINE expected<void> activate() const;
  [[nodiscard]] ROSTER_INLINE expected<void> run(std::span<const step> steps);
  [[nodiscard]] ROSTER_INLINE expected<void> run_single(const step& only, bool f64);
  [[nodiscard]] ROSTER_INLINE expected<void> launched(int cuda_error, std::string_view what, bool cooperative);
  [[nodiscard]] ROSTER_INLINE expected<void> run_with_calls(std::span<const step> steps);
  [[nodiscard]] ROSTER_INLINE expected<void> run_call(const kernel_call& call);

  adapter_info info_;
  int ordinal_ = 0;
  void* context_ = nullptr;      // CUcontext: the primary context, retained
  detail::kernel_set* kernels_ = nullptr;  // the module loaded from the image, and its functions; null until the first dispatch
  code_load loaded_;                       // how the module was loaded (roster::kernels_loaded), once it is
  int variant_ = 0;                        // the fast path's kernel shape (ROSTER_CUDA_VARIANT)
  void* stream_ = nullptr;       // CUstream (a cudaStream_t)
  void* event_start_ = nullptr;  // CUevent
  void* event_stop_ = nullptr;
  double* partials_ = nullptr;   // one double per block of the largest grid
  int grid_stream_[2][8] = {}, grid_program_[2] = {}, grid_dot_[2] = {};  // [f64][op]: blocks resident at once
  bool cooperative_ = false;
  grid_sync_mode mode_ = grid_sync_mode::split;
  launch_counts counts_;
  std::vector<slot> slots_;
};

/// The CUDA backend's entry for ROSTER_REGISTER_BACKEND: id "cuda", rank 10.
struct backend {
  static constexpr std::string_view id = "cuda";
  static constexpr int rank = 10;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = cuda::device;
  /// Its users' kernels are launchers (roster::cuda::kernel).
  using kernel_payload = launcher;
  /// Opens CUDA device `ordinal`.
  ROSTER_API static ROSTER_INLINE expected<std::unique_ptr<device_type>> open(open_key, std::uint32_t ordinal);
  /// Lists the CUDA devices this process sees; empty without an NVIDIA GPU,
  /// a driver, or a visible device (open() then says which).
  ROSTER_API static ROSTER_INLINE expected<std::vector<adapter_info>> enumerate();
};

}  // namespace roster::cuda

// The out-of-line code, by job: in header-only mode (and in a ROSTER_SOURCE
// file) here, in library mode compiled once by src/<job>.cpp.
#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/adapters-inl.hpp>
#  include <roster/backends/cuda/detail/device-inl.hpp>
#  include <roster/backends/cuda/detail/dispatch-inl.hpp>
#  include <roster/backends/cuda/detail/driver-inl.hpp>
#  include <roster/backends/cuda/detail/errors-inl.hpp>
#  include <roster/backends/cuda/detail/module-inl.hpp>
#  include <roster/backends/cuda/detail/registration-inl.hpp>
#else
// Library mode: the link needs the bodies, from a ROSTER_SOURCE file or the library.
ROSTER_IMPL_NEED_BODIES(cuda);
#endif
