#pragma once
/// The device interface: the adapter a device opened (adapter_info), what it
/// can do (device_caps), and the device class a backend derives from.
/// roster/backend.hpp includes it. Its out-of-line code is backend.hpp's body
/// (detail/backend/backend-inl.hpp): kernel_for finds a built-in kernel
/// through the backend lookups, so the two compile together.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/kernels.hpp>
#include <roster/program.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// Device time in nanoseconds: what timed_dispatch returns. roster's own type,
/// so that including roster costs no <chrono> (libstdc++'s brings <sstream>
/// and the locale machinery into every file). It converts to and from
/// std::chrono::nanoseconds both ways, so `std::chrono::nanoseconds t = *d.timed_dispatch(p);`
/// and a backend's `return std::chrono::nanoseconds(...)` read as before.
struct duration_ns {
  std::int64_t ns = 0;
  constexpr duration_ns() noexcept = default;
  constexpr explicit duration_ns(std::int64_t n) noexcept : ns(n) {}
  /// From std::chrono::nanoseconds (any duration whose period is 1/1e9 s).
  template <class D>
    requires(D::period::num == 1 && D::period::den == 1'000'000'000)
  constexpr duration_ns(const D& d) noexcept : ns(static_cast<std::int64_t>(d.count())) {}
  /// To std::chrono::nanoseconds.
  template <class D>
    requires(D::period::num == 1 && D::period::den == 1'000'000'000)
  constexpr operator D() const noexcept { return D(static_cast<typename D::rep>(ns)); }
  /// Returns the nanoseconds.
  [[nodiscard]] constexpr std::int64_t count() const noexcept { return ns; }
  /// Returns the time in seconds.
  [[nodiscard]] constexpr double seconds() const noexcept { return static_cast<double>(ns) * 1e-9; }
  constexpr duration_ns& operator+=(duration_ns o) noexcept { ns += o.ns; return *this; }
  friend constexpr duration_ns operator+(duration_ns a, duration_ns b) noexcept { return duration_ns(a.ns + b.ns); }
  friend constexpr auto operator<=>(duration_ns, duration_ns) noexcept = default;
};

namespace detail {
struct static_access;
struct native_access;
}  // namespace detail

/// Kind of physical device, in the order circuits are ranked.
enum class device_type : std::uint8_t { discrete_gpu, integrated_gpu, virtual_gpu, other, cpu };

/// Returns "discrete", "integrated", "virtual", "other" or "cpu" ("unknown" for
/// a value outside the enum, which a faulty enumerator may report).
constexpr std::string_view to_string(device_type t) noexcept {
  constexpr std::string_view names[] = {"discrete", "integrated", "virtual", "other", "cpu"};
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

/// One physical device as one backend sees it.
struct adapter_info {
  std::string backend;                   ///< backend id, e.g. "cuda"
  std::uint32_t ordinal = 0;             ///< index within the backend
  std::string name;                      ///< e.g. "NVIDIA H200"
  device_type type = device_type::other;
  std::array<std::uint8_t, 16> uuid{};   ///< device UUID; all zero when unknown
  std::string pci_address;               ///< "0000:00:07.0", empty when unknown
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint64_t memory_bytes = 0;
  std::string driver_version;
  std::uint32_t compute_units = 0;       ///< multiprocessors or cores
  bool native_grid_sync = false;         ///< can run a whole program in one launch
  bool f64 = true;                       ///< supports double buffers
  /// A software implementation of its API on the host CPU (lavapipe,
  /// SwiftShader, PoCL): without a record that says otherwise, it never
  /// outranks a native adapter of the same device.
  bool software = false;
  op_set ops = op_set::all();            ///< ops this adapter runs
  /// The vendor mask variable this backend's API already applied when it
  /// listed the adapter (the CUDA runtime applies CUDA_VISIBLE_DEVICES), so
  /// circuits take its adapters as the mask's visible set; empty for an API
  /// that ignores the masks (Vulkan).
  std::string applied_mask;

  friend bool operator==(const adapter_info&, const adapter_info&) = default;

  /// Returns whether the UUID is known (not all zero).
  [[nodiscard]] bool has_uuid() const noexcept {
    for (auto b : uuid)
      if (b != 0) return true;
    return false;
  }
  /// Returns the device spec naming this adapter, e.g. "cuda:1".
  [[nodiscard]] std::string spec() const { return backend + ":" + std::to_string(ordinal); }
  /// Returns the UUID in the form its source writes it (empty when unknown):
  /// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for an NVIDIA GPU (vendor
  /// 0x10de), as nvidia-smi does; "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for
  /// every other adapter, a CPU's included.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string uuid_string() const;
};

/// What a device can do.
struct device_caps {
  bool native_grid_sync = false;  ///< runs grid_sync inside one launch
  bool f64 = true;                ///< supports double buffers
  op_set ops = op_set::all();     ///< ops it runs
};

/// A live, opened adapter: allocates buffers and dispatches programs.
///
/// The public calls check their arguments and then call the protected
/// virtual do_ functions, so a backend implements only the work.
class ROSTER_API device {
 public:
  virtual ~device() = default;
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  /// Returns the identity of the adapter this device opened.
  [[nodiscard]] virtual const adapter_info& adapter() const noexcept = 0;
  /// Returns what this device can do.
  [[nodiscard]] virtual device_caps caps() const noexcept = 0;
  /// Returns this device's id, the owner stamped in its buffers.
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

  /// Allocates a buffer of n elements of type t.
  [[nodiscard]] ROSTER_INLINE expected<buffer> allocate(element_type t, std::size_t n);
  /// Allocates a buffer of n elements of T (float or double).
  template <class T>
    requires is_element_v<T>
  [[nodiscard]] expected<buffer> allocate(std::size_t n) {
    return allocate(element_of<T>(), n);
  }
  /// Frees a buffer; its handle must not be used again.
  [[nodiscard]] ROSTER_INLINE expected<void> release(const buffer& b);
  /// Copies host data into a buffer of the same type and length.
  template <class T>
    requires is_element_v<T>
  [[nodiscard]] expected<void> upload(const buffer& b, std::span<const T> src) {
    return upload_raw(b, element_of<T>(), src.data(), src.size());
  }
  /// Copies a buffer into host memory of the same type and length.
  template <class T>
    requires is_element_v<T>
  [[nodiscard]] expected<void> download(const buffer& b, std::span<T> dst) {
    return download_raw(b, element_of<T>(), dst.data(), dst.size());
  }
  /// Validates and runs a program; may return before it completes.
  [[nodiscard]] ROSTER_INLINE expected<void> dispatch(const program& p);
  /// Runs a program once and returns the device's own measure of its time
  /// (events or timestamp queries where the API has them).
  [[nodiscard]] ROSTER_INLINE expected<duration_ns> timed_dispatch(const program& p);
  /// Waits until every dispatched program has completed.
  [[nodiscard]] virtual expected<void> synchronize() = 0;

  /// Runs steps already validated for this device (for wrappers).
  [[nodiscard]] virtual expected<void> dispatch_steps(std::span<const step> steps) = 0;
  /// Runs validated steps once and returns their device time (for wrappers).
  [[nodiscard]] ROSTER_INLINE virtual expected<duration_ns> timed_dispatch_steps(
      std::span<const step> steps);

  /// Returns the kernel a call runs here: the variant it names; else the
  /// variant a tuning record chose for its op, element type and size class on
  /// this device (see use_kernel_choices); else the op's default variant.
  [[nodiscard]] ROSTER_INLINE expected<const kernel_entry*> kernel_for(const kernel_call& c) const;
  /// Gives the device the measured variant choices its calls follow when they
  /// name no variant; acquire passes the current tuning record's. The span
  /// must outlive the device (current_tuning()'s snapshots do).
  virtual void use_kernel_choices(std::span<const kernel_choice> choices) noexcept { kernel_choices_ = choices; }

  [[nodiscard]] ROSTER_INLINE expected<void> upload_raw(const buffer& b, element_type t, const void* src,
                                                        std::size_t count);
  [[nodiscard]] ROSTER_INLINE expected<void> download_raw(const buffer& b, element_type t, void* dst,
                                                          std::size_t count);

 protected:
  /// Gives the device a fresh, process-unique id.
  ROSTER_INLINE device();
  /// Shares the id of a wrapped device, so its buffers stay valid here.
  explicit device(std::uint64_t id) noexcept : id_(id) {}

  /// Allocates memory for a checked request; returns the slot.
  [[nodiscard]] virtual expected<std::uint32_t> do_allocate(element_type t, std::size_t n) = 0;
  /// Frees a slot.
  [[nodiscard]] virtual expected<void> do_release(std::uint32_t slot) = 0;
  /// Returns whether a slot is live with this type and size.
  [[nodiscard]] virtual bool owns(const buffer& b) const noexcept = 0;
  [[nodiscard]] virtual expected<void> do_upload(const buffer& b, const void* src) = 0;
  [[nodiscard]] virtual expected<void> do_download(const buffer& b, void* dst) = 0;

  /// Writes this device's native handles of kind `kind` (a native type's
  /// native_id, roster/native.hpp) to `out`; returns false for a kind it does
  /// not have (the default: a device with no native handles).
  [[nodiscard]] virtual expected<bool> do_native(std::uint64_t kind, void* out) {
    (void)kind, (void)out;
    return false;
  }
  /// Writes the native handles of a checked, live buffer to `out` (as do_native).
  [[nodiscard]] virtual expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
    (void)b, (void)kind, (void)out;
    return false;
  }

  /// Tells the device that a grid-sync split wrapper now cuts its programs, so
  /// it should run what remains (e.g. a dot's final sum) without grid-wide sync too.
  virtual void on_split_wrapped() noexcept {}

  /// Checks that a buffer belongs to this device and is live.
  [[nodiscard]] ROSTER_INLINE expected<void> check_buffer(const buffer& b, std::string_view what) const;

  template <class Inner>
  friend class grid_sync_split;
  friend struct detail::static_access;  // static dispatch (static_registry.hpp)
  friend struct detail::native_access;  // native handles (native.hpp)

 private:
  // Validates a program for this device: its steps, ops, buffers and type.
  // With `lowered`, also writes the steps to run: each call whose kernel is a
  // built-in entry becomes that built-in step (the backend's fused path).
  [[nodiscard]] ROSTER_INLINE expected<void> check_program(const program& p,
                                                           std::vector<step>* lowered = nullptr) const;

  std::uint64_t id_;
  std::span<const kernel_choice> kernel_choices_{};
};

}  // namespace roster
