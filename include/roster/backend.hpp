#pragma once
/// The backend model: the three entry types a backend submits to the
/// inventory, the run-time registry and the backend concept. The device
/// interface (adapter_info, device_caps, class device) is
/// roster/device_interface.hpp, included here.

#include <roster/config.hpp>
#include <roster/device_interface.hpp>
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
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

class open_key;
namespace detail {
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

/// Returns whether adapter `ordinal` is among the `count` a backend lists, for
/// its open(): with none at all, an errc::unavailable error "spec: none_what"
/// whose fix is `none_fix` (how to install a driver); past the last one, an
/// errc::not_found error naming how many `api` adapters this host has.
[[nodiscard]] inline expected<void> check_adapter_ordinal(std::string_view spec, std::string_view api,
                                                          std::size_t count, std::uint32_t ordinal,
                                                          std::string_view none_what, std::string_view none_fix) {
  if (count == 0) return make_error(errc::unavailable, std::string(spec) + ": " + std::string(none_what), none_fix);
  if (ordinal >= count)
    return make_error(errc::not_found,
                      std::string(spec) + ": no such adapter; this host has " + std::to_string(count) + " " +
                          std::string(api) + " adapter" + (count == 1 ? "" : "s"),
                      "use an ordinal below " + std::to_string(count) + " (roster-info lists them)");
  return {};
}

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

/// A backend's bodies (its *-inl.hpp files, compiled in header-only mode, in
/// a ROSTER_SOURCE file, or into its library) define this symbol, and a file
/// that includes the backend's header in library mode refers to it (ELF). A
/// program whose ROSTER_SOURCE file leaves out a backend header that another
/// of its files includes, and that links no library of that backend, then
/// fails to link with an undefined reference that names the fix, beside the
/// backend's own functions; without it, a file that calls none of them would
/// link a registration whose bodies are missing or, worse, nothing at all.
#define ROSTER_IMPL_BODIES_SYMBOL(name)                                                                 \
  ROSTER_IMPL_CAT(ROSTER_IMPL_CAT(roster_, name),                                                       \
                  ROSTER_IMPL_CAT(ROSTER_IMPL_CAT(_backend_not_compiled__Fix_include_roster_backends_, name), \
                                  ROSTER_IMPL_CAT(_hpp_in_the_ROSTER_SOURCE_file_or_link_libroster_, name)))
/// The same for roster's own bodies: <roster/roster.hpp> defines it where it
/// compiles them (header-only mode, a ROSTER_SOURCE file, src/roster.cpp) and
/// refers to it in library mode, so a ROSTER_SOURCE file that includes only
/// part of roster fails to link naming the fix.
#define ROSTER_IMPL_CORE_BODIES_SYMBOL \
  roster_not_compiled__Fix_include_roster_roster_hpp_in_the_ROSTER_SOURCE_file_or_link_libroster
#if defined(__ELF__)
// Weak: every header-only file of a program defines it, and so may a library
// beside a ROSTER_SOURCE file that compiles the same bodies.
#  define ROSTER_IMPL_DEFINE_LINK_SYMBOL(symbol) \
    extern "C" __attribute__((weak, visibility("default"))) const char symbol = 0
#  define ROSTER_IMPL_NEED_LINK_SYMBOL(symbol, holder)                  \
    extern "C" const char symbol;                                        \
    namespace roster::detail {                                           \
    [[gnu::used]] inline const char* const holder = &symbol;             \
    }                                                                    \
    static_assert(true)
#else
#  define ROSTER_IMPL_DEFINE_LINK_SYMBOL(symbol) static_assert(true)
#  define ROSTER_IMPL_NEED_LINK_SYMBOL(symbol, holder) static_assert(true)
#endif
#define ROSTER_IMPL_DEFINE_BODIES(name) ROSTER_IMPL_DEFINE_LINK_SYMBOL(ROSTER_IMPL_BODIES_SYMBOL(name))
#define ROSTER_IMPL_NEED_BODIES(name) \
  ROSTER_IMPL_NEED_LINK_SYMBOL(ROSTER_IMPL_BODIES_SYMBOL(name), ROSTER_IMPL_CAT(needs_bodies_of_, name))

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/backend-inl.hpp>
#endif
