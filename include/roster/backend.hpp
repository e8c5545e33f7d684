#pragma once
/// The backend model: adapters, the device interface, and the three entry
/// types a backend submits to the inventory.

#include <roster/config.hpp>
#include <roster/detail/backend/backend_id.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/kernels.hpp>
#include <roster/program.hpp>
#include <roster/detail/base/plugin_note.hpp>

#include <array>
#include <mutex>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <memory>
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

class open_key;
namespace detail {
struct static_access;
struct native_access;
/// The one maker of open keys: roster's open path (acquire.hpp).
struct open_access {
  [[nodiscard]] static constexpr open_key key() noexcept;
};
}  // namespace detail

/// A key only roster's open path can make. A backend's open() takes one, so no
/// code outside roster::acquire and the routes built on it can open a device
/// past ROSTER_REQUIRE, the vendor masks and the wrappers.
class open_key {
  constexpr open_key() noexcept = default;
  friend struct detail::open_access;
};

constexpr open_key detail::open_access::key() noexcept { return open_key{}; }

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

/// An entry point of one backend: the stable id, the factory, the enumerator,
/// the ops and the payload type of its kernels. Submitted with
/// ROSTER_REGISTER_BACKEND.
struct backend_registration {
  std::string_view id;  ///< e.g. "cpu"
  /// Opens adapter `ordinal`; only roster's open path holds the key. Must not
  /// throw; roster guards it anyway.
  expected<std::unique_ptr<device>> (*open)(open_key, std::uint32_t ordinal);
  /// Lists the backend's adapters on this host.
  expected<std::vector<adapter_info>> (*enumerate)();
  /// The built-in ops it runs: ROSTER_REGISTER_BACKEND places one kernel
  /// entry per op and element type from this set, so the two never disagree.
  op_set ops = op_set::all();
  /// The payload type its users' kernel entries carry (kernel_payload::id);
  /// 0 when it runs no users' kernels.
  std::uint64_t payload_id = 0;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::string_view key() const noexcept { return id; }
};

/// A backend's precedence: lower rank wins. A backend without one ranks last.
struct backend_precedence {
  std::string_view id;
  int rank = 0;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::string_view key() const noexcept { return id; }
};

/// Whether a backend dispatches on this host or only emits code.
struct backend_capability {
  std::string_view id;
  bool dispatches = true;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::string_view key() const noexcept { return id; }
};

/// Rank given to a backend that registered no precedence.
inline constexpr int unranked = 1 << 30;

/// One registered backend with its precedence and capability.
struct backend_entry {
  const backend_registration* registration = nullptr;
  int rank = unranked;
  bool dispatches = true;
  [[nodiscard]] std::string_view id() const noexcept { return registration->id; }
};

namespace detail {
// Backends registered at run time (roster::register_factory, device.hpp),
// beside the inventory's: an immutable list published with one atomic
// pointer. Lists and entries are never freed, so a registration pointer
// stays valid for the process.
struct runtime_backend {
  std::string id;  // lower case; registration.id views it
  backend_registration registration;  // its open is null: the factory below opens
  int rank;
  expected<std::unique_ptr<device>> (*factory)(std::uint32_t ordinal) = nullptr;
};
struct runtime_backend_list {
  std::vector<const runtime_backend*> entries;
  const runtime_backend_list* retired_next = nullptr;
};
struct runtime_backend_registry {
  std::mutex mutex;
  std::atomic<const runtime_backend_list*> current{nullptr};
};

/// Returns the process-wide registry of run-time backends.
[[nodiscard]] ROSTER_API ROSTER_INLINE runtime_backend_registry& runtime_backends() noexcept;

/// Returns the current list of run-time backends, or null when none was registered.
inline const runtime_backend_list* runtime_backend_snapshot() noexcept {
  return runtime_backends().current.load(std::memory_order_acquire);
}

}  // namespace detail

namespace detail {
// The sorted list registered_backends() hands out, for one set of inventory
// and run-time snapshots; published with one atomic pointer and never freed,
// so a view of it stays valid as old inventory snapshots do.
struct backend_list {
  const void* registrations = nullptr;  // the snapshots it was built from
  std::size_t registration_count = 0;
  const void* precedences = nullptr;
  const void* capabilities = nullptr;
  const void* runtime = nullptr;
  std::vector<backend_entry> entries;
  const backend_list* previous = nullptr;  // the list it replaced, kept reachable (never freed)
};
}  // namespace detail

/// Returns every registered backend sorted by (rank, id): a view of a list
/// built once per set of registrations (a plugin loaded or closed, a factory
/// registered), which allocates nothing after the first call and stays valid.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const backend_entry> registered_backends();

/// Returns the registered backend with this id (case-insensitive), or null.
[[nodiscard]] ROSTER_API ROSTER_INLINE const backend_registration* find_backend(std::string_view id) noexcept;

namespace detail {
// Calls a backend's factory with the open key; a null device is an error.
// Only the open path (detail::open, acquire.hpp) calls it: it is what guards
// the call and applies the checks and wrappers.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::unique_ptr<device>> open_registered(
    const backend_registration& backend, std::uint32_t ordinal);
}  // namespace detail

/// Calls a backend's enumerator, turning a throw into an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<adapter_info>> enumerate_adapters(
    const backend_registration& backend) noexcept;

/// Checks the inventories of backend entries for key conflicts.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> check_backends();

/// The backend contract. A backend is a type with:
///   static constexpr std::string_view id;   // stable id
///   static constexpr int rank;              // precedence, lower wins
///   static constexpr bool dispatches;       // runs on this host
///   static constexpr op_set ops;            // built-in ops it runs
///   using device_type = ...;                // final class derived from roster::device
///   static expected<std::unique_ptr<device_type>> open(roster::open_key, std::uint32_t ordinal);
///   static expected<std::vector<adapter_info>> enumerate();
/// and optionally:
///   using kernel_payload = P;               // the payload type of its users' kernels (P::payload_id)
///   template <class T> static constexpr kernel_payload builtin_payload(op o);  // entry points of its built-in ops
template <class B>
concept backend = requires(open_key key, std::uint32_t ordinal) {
  { B::id } -> std::convertible_to<std::string_view>;
  { B::rank } -> std::convertible_to<int>;
  { B::dispatches } -> std::convertible_to<bool>;
  { B::ops } -> std::convertible_to<op_set>;
  typename B::device_type;
  requires std::derived_from<typename B::device_type, device>;
  { B::open(key, ordinal) } -> std::same_as<expected<std::unique_ptr<typename B::device_type>>>;
  { B::enumerate() } -> std::same_as<expected<std::vector<adapter_info>>>;
};

namespace detail {
template <backend B>
expected<std::unique_ptr<device>> open_erased(open_key key, std::uint32_t ordinal) {
  auto d = B::open(key, ordinal);
  if (!d) return std::move(d).error();
  return std::unique_ptr<device>(std::move(*d));
}
template <class B>
constexpr std::uint64_t payload_id_for() noexcept {
  if constexpr (requires { B::kernel_payload::payload_id; })
    return B::kernel_payload::payload_id;
  else
    return 0;
}
template <backend B>
inline constexpr backend_registration registration_of{B::id, &open_erased<B>, &B::enumerate, B::ops,
                                                      payload_id_for<B>()};
// The kernel entry of built-in op O over T that ROSTER_REGISTER_BACKEND
// derives from B's op set, with B's entry point for it where B gives one.
template <class B, op O, class T>
constexpr kernel_entry builtin_entry() noexcept {
  if constexpr (requires { B::template builtin_payload<T>(O); })
    return builtin_kernel<T>(O, B::id, B::template builtin_payload<T>(O));
  else
    return builtin_kernel<T>(O, B::id);
}
template <class B, op O, class T>
inline constexpr kernel_entry builtin_entry_of = builtin_entry<B, O, T>();
template <backend B>
inline constexpr backend_precedence precedence_of{B::id, B::rank};
template <backend B>
inline constexpr backend_capability capability_of{B::id, B::dispatches};
template <class B>
constexpr bool id_is_valid() noexcept {
  if constexpr (backend<B>)
    return valid_backend_id(std::string_view(B::id));
  else
    return true;  // the concept's own static_assert speaks
}
template <backend B>
constexpr backend_claim claim_of(const char* site) noexcept {
  return {&registration_of<B>, B::id, B::rank, B::dispatches, B::ops, &type_name<B>, site};
}
}  // namespace detail

}  // namespace roster

#define ROSTER_IMPL_CHECK_BACKEND(B)                                                               \
  static_assert(::roster::backend<B>,                                                             \
                "ROSTER_REGISTER_BACKEND(" #B "): " #B " does not model roster::backend. It needs "  \
                "static id, rank, dispatches, ops, a device_type derived from roster::device, "      \
                "open(roster::open_key, std::uint32_t) -> expected<unique_ptr<device_type>> and "    \
                "enumerate() -> "                                                                     \
                "expected<vector<adapter_info>>; see roster/backend.hpp")

#define ROSTER_IMPL_CHECK_BACKEND_ID(B)                                                            \
  static_assert(::roster::detail::id_is_valid<B>(),                                               \
                "ROSTER_REGISTER_BACKEND(" #B "): " #B "::id is not a backend id a device spec can " \
                "name: use 1 to 64 ASCII letters, digits, '_' or '-' (no space, no ':'); "          \
                "specs compare it without case")

// One kernel entry per built-in op of B's op set and element type: the
// registration's op set is the one source of what the backend runs.
#define ROSTER_IMPL_BUILTIN_ENTRY(B, o, T) \
  ROSTER_IMPL_SUBMIT_IF(::roster::kernel_entry, (B::ops.contains(o)), (::roster::detail::builtin_entry_of<B, o, T>))
#define ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, o) \
  ROSTER_IMPL_BUILTIN_ENTRY(B, o, float);    \
  ROSTER_IMPL_BUILTIN_ENTRY(B, o, double)
#define ROSTER_IMPL_BUILTIN_ENTRIES(B)                                   \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::fill);                 \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::copy);                 \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::mul);                  \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::add);                  \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::triad);                \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::nstream);              \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::dot);                  \
  ROSTER_IMPL_BUILTIN_ENTRIES_OF(B, ::roster::op::grid_sync)

/// Registers backend type B: its registration, precedence and capability,
/// its claim on its id (see detail/backend/backend_id.hpp), and one kernel entry per
/// built-in op of its op set and element type.
#define ROSTER_REGISTER_BACKEND(B) ROSTER_IMPL_REGISTER_BACKEND(B, ROSTER_IMPL_CAT(roster_backend_claim_, __COUNTER__))
#define ROSTER_IMPL_REGISTER_BACKEND(B, claim)                                                   \
  ROSTER_IMPL_CHECK_BACKEND(B);                                                                   \
  ROSTER_IMPL_CHECK_BACKEND_ID(B);                                                                \
  ROSTER_IMPL_PLUGIN_NOTE(ROSTER_IMPL_CAT(roster_plugin_note_, __COUNTER__));                     \
  ROSTER_SUBMIT(::roster::backend_registration, ::roster::detail::registration_of<B>);            \
  ROSTER_SUBMIT(::roster::backend_precedence, ::roster::detail::precedence_of<B>);                \
  ROSTER_SUBMIT(::roster::backend_capability, ::roster::detail::capability_of<B>);                \
  static constinit const ::roster::detail::backend_claim claim =                                  \
      ::roster::detail::claim_of<B>(__FILE__ ":" ROSTER_IMPL_STR(__LINE__));                     \
  ROSTER_SUBMIT(::roster::detail::backend_claim, claim);                                          \
  ROSTER_IMPL_BUILTIN_ENTRIES(B)

/// Defines an anchor symbol in a backend library so a program can force the
/// linker to keep it: ROSTER_USE_BACKEND(name) in the program references it.
#define ROSTER_DEFINE_BACKEND_ANCHOR(name) \
  extern "C" ROSTER_API const char ROSTER_IMPL_CAT(roster_backend_anchor_, name) = 0
/// References a backend's anchor so a static archive member is not dropped.
#define ROSTER_USE_BACKEND(name)                                                       \
  extern "C" const char ROSTER_IMPL_CAT(roster_backend_anchor_, name);                 \
  [[gnu::used]] static const char* const ROSTER_IMPL_CAT(roster_use_backend_, name) = \
      &ROSTER_IMPL_CAT(roster_backend_anchor_, name)

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/backend-inl.hpp>
#endif
