#pragma once
/// The kernel inventory: users' own kernels, one entry per op, backend,
/// element type and variant, placed in the linker-section inventory with
/// ROSTER_KERNEL and called from a program with program::call.
///
/// An entry is constinit data: nothing runs at start-up. Its entry point is a
/// payload whose type the entry's backend defines in its own folder (a host
/// function, a CUDA launcher, SPIR-V words, OpenCL C source...), tagged with
/// that type's id: the core never names a backend, and each backend's header
/// gives the factory that builds its entries (e.g. roster::cpu::kernel).

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/program.hpp>

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace roster {

/// How a kernel uses a buffer argument.
enum class access : std::uint8_t { read, write, read_write };

/// Returns "read", "write" or "read_write".
constexpr std::string_view to_string(access a) noexcept {
  constexpr std::string_view names[] = {"read", "write", "read_write"};
  const auto i = static_cast<std::size_t>(a);
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

/// Whether a buffer argument's length must equal the call's extent.
enum class length : std::uint8_t { extent, any };

/// One parameter of a kernel signature: a buffer or a scalar.
struct kernel_param {
  bool is_buffer = true;
  access mode = access::read;                  ///< buffer: how the kernel uses it
  element_type type = element_type::f64;       ///< buffer: its element type
  roster::length length = length::extent;      ///< buffer: whether its length is the extent
  scalar_type scalar = scalar_type::f64;       ///< scalar: its type
};

/// A buffer argument the kernel reads (L: whether its length is the extent).
template <class T, length L = length::extent>
struct read {
  static_assert(is_element_v<T>, "a kernel buffer holds float or double");
  static constexpr kernel_param param{true, access::read, element_of<T>(), L, scalar_type::f64};
};
/// A buffer argument the kernel writes.
template <class T, length L = length::extent>
struct write {
  static_assert(is_element_v<T>, "a kernel buffer holds float or double");
  static constexpr kernel_param param{true, access::write, element_of<T>(), L, scalar_type::f64};
};
/// A buffer argument the kernel reads and writes.
template <class T, length L = length::extent>
struct read_write {
  static_assert(is_element_v<T>, "a kernel buffer holds float or double");
  static constexpr kernel_param param{true, access::read_write, element_of<T>(), L, scalar_type::f64};
};

namespace detail {
template <class T>
constexpr scalar_type scalar_of() noexcept {
  if constexpr (std::is_same_v<T, float>) return scalar_type::f32;
  else if constexpr (std::is_same_v<T, double>) return scalar_type::f64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return scalar_type::i32;
  else return scalar_type::u32;
}
template <class T>
inline constexpr bool is_scalar_v = is_element_v<T> || std::is_same_v<T, std::int32_t> ||
                                    std::is_same_v<T, std::uint32_t>;
}  // namespace detail

/// A scalar argument of type T (float, double, std::int32_t or std::uint32_t).
template <class T>
struct scalar {
  static_assert(detail::is_scalar_v<T>, "a kernel scalar is float, double, std::int32_t or std::uint32_t");
  static constexpr kernel_param param{false, access::read, element_type::f64, length::any, detail::scalar_of<T>()};
};

/// Stands for the element type in ROSTER_CPU_KERNEL's signature, which
/// registers the kernel once for float and once for double.
struct elem {};

namespace detail {
template <class E, class P>
struct with_elem {
  using type = P;
};
template <class E, length L>
struct with_elem<E, read<elem, L>> {
  using type = read<E, L>;
};
template <class E, length L>
struct with_elem<E, write<elem, L>> {
  using type = write<E, L>;
};
template <class E, length L>
struct with_elem<E, read_write<elem, L>> {
  using type = read_write<E, L>;
};
template <class E>
struct with_elem<E, scalar<elem>> {
  using type = scalar<E>;
};
}  // namespace detail

// The placeholder forms, accepted only by ROSTER_CPU_KERNEL's substitution.
template <length L>
struct read<elem, L> {};
template <length L>
struct write<elem, L> {};
template <length L>
struct read_write<elem, L> {};
template <>
struct scalar<elem> {};

/// The parameters of a signature, as static data a kernel entry points at.
template <class... P>
inline constexpr kernel_param signature_of[] = {P::param...};

/// One buffer argument as an entry point sees it: the memory (host pointer
/// on the CPU, device pointer on CUDA; null on Vulkan, where it is bound).
struct kernel_buffer {
  void* data = nullptr;
  std::size_t size = 0;  ///< elements
  element_type type = element_type::f64;
};

/// The arguments of one kernel call, in signature order, as the entry point
/// receives them; scalars are already converted to the signature's types.
struct kernel_args {
  std::span<const kernel_buffer> buffers;
  std::span<const scalar_arg> scalars;
  std::size_t extent = 0;  ///< the index space [0, extent)
  /// Returns buffer i's memory as T* (T may be const).
  template <class T>
  [[nodiscard]] T* data(std::size_t i) const noexcept {
    return static_cast<T*>(buffers[i].data);
  }
  /// Returns scalar i as T.
  template <class T>
  [[nodiscard]] T scalar(std::size_t i) const noexcept {
    return scalars[i].as<T>();
  }
};

/// A function run on the host over indices [begin, end) of a call: the entry
/// point of a backend that runs host code (the CPU backend's kernels, static
/// kernels), and of a tuning reference (roster::tune_options::reference).
using host_kernel_fn = void (*)(const kernel_args& args, std::size_t begin, std::size_t end);

/// Returns the stable id of a kernel payload type from its name and layout
/// version, e.g. payload_id_of("roster::host_kernel/1") (FNV-1a, 64 bits).
constexpr std::uint64_t payload_id_of(std::string_view name) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

/// A kernel's entry point as its backend defines it: the address of a
/// constinit object of the backend's payload type, and that type's id. A
/// payload type P declares `static constexpr std::uint64_t payload_id`.
struct kernel_payload {
  const void* data = nullptr;
  std::uint64_t id = 0;
};

/// Returns the payload of a constinit object of payload type P.
template <class P>
constexpr kernel_payload payload_of(const P* object) noexcept {
  return {object, P::payload_id};
}

/// The payload of a host function over a range of indices (host_kernel_fn).
struct host_kernel {
  static constexpr std::uint64_t payload_id = payload_id_of("roster::host_kernel/1");
  host_kernel_fn fn = nullptr;
};
/// The host_kernel payload of function Fn, as constinit data.
template <host_kernel_fn Fn>
inline constexpr host_kernel host_kernel_of{Fn};

/// Marks a variant as the one that runs when a call names none.
inline constexpr bool default_variant = true;
/// Marks a variant that runs only when named (or chosen by tuning).
inline constexpr bool other_variant = false;

/// The inventory key of a kernel entry.
struct kernel_key {
  std::string_view op;
  std::string_view backend;
  element_type type = element_type::f64;
  std::string_view variant;
  friend constexpr bool operator==(const kernel_key&, const kernel_key&) = default;
  friend constexpr auto operator<=>(const kernel_key&, const kernel_key&) = default;
};

/// One kernel: op name, backend, element type, variant, signature and the
/// backend's entry point. Submitted with ROSTER_KERNEL.
struct kernel_entry {
  std::string_view op;       ///< e.g. "axpy"
  std::string_view backend;  ///< the backend's id, e.g. "cpu"
  std::string_view variant;  ///< e.g. "plain", "tiled"
  bool is_default = false;   ///< runs when a call names no variant
  element_type type = element_type::f64;  ///< the first buffer's element type
  std::span<const kernel_param> signature;
  /// The entry point, of the payload type the backend's registration names
  /// (backend_registration::payload_id); empty for a built-in op the backend
  /// runs on its own path.
  kernel_payload payload{};
  /// The built-in op this entry stands for; op::call for a user kernel. A
  /// dispatch maps a call whose entry is a built-in onto the backend's own
  /// path for that op (fused on the CPU, one launch on CUDA, one submit on
  /// Vulkan), so a built-in entry needs no entry point of its own.
  roster::op builtin = roster::op::call;
  /// Returns the inventory key: op, backend, element type, variant.
  [[nodiscard]] constexpr kernel_key key() const noexcept { return {op, backend, type, variant}; }
  /// Returns the payload as P, or null when the entry carries another type.
  template <class P>
  [[nodiscard]] const P* payload_as() const noexcept {
    return payload.id == P::payload_id ? static_cast<const P*>(payload.data) : nullptr;
  }
};

/// Returns a kernel entry with signature P... and a backend's payload: the
/// one builder under each backend's factory (roster::cpu::kernel, ...).
template <class... P>
constexpr kernel_entry kernel_entry_of(std::string_view op, std::string_view backend, std::string_view variant,
                                       bool is_default, kernel_payload payload) noexcept {
  static_assert(sizeof...(P) > 0, "a kernel signature needs at least one buffer parameter");
  static_assert(signature_of<P...>[0].is_buffer, "a kernel signature starts with a buffer parameter");
  kernel_entry e{};
  e.op = op;
  e.backend = backend;
  e.variant = variant;
  e.is_default = is_default;
  e.type = signature_of<P...>[0].type;
  e.signature = signature_of<P...>;
  e.payload = payload;
  return e;
}

namespace detail {
// Substitutes E for roster::elem in each parameter, for the factories that
// register one function for float and double.
template <class E, class... P>
constexpr kernel_entry kernel_entry_for(std::string_view op, std::string_view backend, std::string_view variant,
                                        bool is_default, kernel_payload payload) noexcept {
  return kernel_entry_of<typename with_elem<E, P>::type...>(op, backend, variant, is_default, payload);
}
}  // namespace detail

/// A typed handle to a kernel op: its signature in the type, so a call made
/// through roster::call is checked for arity and kinds as it compiles.
template <class... P>
struct kernel_ref {
  std::string_view op;
  call_options options{};
  /// Returns the same handle with an extent or a variant for its calls.
  [[nodiscard]] constexpr kernel_ref with(call_options o) const noexcept { return {op, o}; }
};

namespace detail {
template <class P, class A>
constexpr bool arg_fits() noexcept {
  if constexpr (P::param.is_buffer) return std::is_same_v<A, buffer>;
  else if constexpr (P::param.scalar == scalar_type::f32) return std::is_convertible_v<A, float>;
  else if constexpr (P::param.scalar == scalar_type::f64) return std::is_convertible_v<A, double>;
  else return std::is_integral_v<A>;
}
template <class P, class A>
void add_arg(const A& a, buffer* bufs, std::size_t& nb, scalar_arg* scal, std::size_t& ns) {
  if constexpr (P::param.is_buffer) {
    bufs[nb++] = a;
  } else if constexpr (P::param.scalar == scalar_type::f32) {
    scal[ns++] = scalar_arg(static_cast<float>(a));
  } else if constexpr (P::param.scalar == scalar_type::f64) {
    scal[ns++] = scalar_arg(static_cast<double>(a));
  } else if constexpr (std::is_signed_v<A>) {
    scal[ns++] = scalar_arg(static_cast<std::int32_t>(a));  // validation refuses a negative for uint32
  } else {
    scal[ns++] = scalar_arg(static_cast<std::uint32_t>(a));
  }
}
}  // namespace detail

/// Appends a call of kernel `k` to `p`, its arguments in signature order;
/// the count and the kind of each (buffer or scalar) are checked at compile
/// time, element types and lengths when the program is validated.
template <class... P, class... A>
program& call(program& p, const kernel_ref<P...>& k, const A&... args) {
  static_assert(sizeof...(A) == sizeof...(P),
                "roster::call: the number of arguments differs from the kernel's signature");
  static_assert((detail::arg_fits<P, A>() && ...),
                "roster::call: an argument does not fit its parameter: a buffer parameter takes a roster::buffer, "
                "a float or double scalar a number, an integer scalar an integer");
  buffer bufs[sizeof...(A)]{};
  scalar_arg scal[sizeof...(A)]{};
  std::size_t nb = 0, ns = 0;
  (detail::add_arg<P>(args, bufs, nb, scal, ns), ...);
  return p.call(k.op, std::span<const buffer>(bufs, nb), std::span<const scalar_arg>(scal, ns), k.options);
}


/// Returns the signature of built-in op `o` over T, in the order of the
/// program member function's arguments (grid_sync: none), e.g. triad:
/// (write a, read b, read c, scalar s); dot: (write r of any length, read a, read b).
template <class T>
  requires is_element_v<T>
constexpr std::span<const kernel_param> builtin_signature(op o) noexcept {
  switch (o) {
    case op::fill: return signature_of<write<T>, scalar<T>>;
    case op::copy: return signature_of<write<T>, read<T>>;
    case op::mul: return signature_of<write<T>, read<T>, scalar<T>>;
    case op::add: return signature_of<write<T>, read<T>, read<T>>;
    case op::triad: return signature_of<write<T>, read<T>, read<T>, scalar<T>>;
    case op::nstream: return signature_of<read_write<T>, read<T>, read<T>, scalar<T>>;
    case op::dot: return signature_of<write<T, length::any>, read<T>, read<T>>;
    case op::grid_sync: case op::call: break;
  }
  return {};
}


/// Returns the inventory entry of built-in op `o` over T on `backend`: variant
/// "builtin", the default, with the op's signature and an optional payload
/// (empty where the backend's dispatch runs the op on its own path).
/// ROSTER_REGISTER_BACKEND submits one for each op of the backend's op set.
template <class T>
  requires is_element_v<T>
constexpr kernel_entry builtin_kernel(op o, std::string_view backend, kernel_payload payload = {}) noexcept {
  kernel_entry e{};
  e.op = to_string(o);
  e.backend = backend;
  e.variant = builtin_variant;
  e.is_default = true;
  e.type = element_of<T>();
  e.signature = builtin_signature<T>(o);
  e.payload = payload;
  e.builtin = o;
  return e;
}

/// Returns the built-in step a call of `entry` runs when the entry stands for
/// a built-in op and the call covers its buffers whole (no shorter extent);
/// otherwise a step of op::call (the caller runs the entry point).
[[nodiscard]] constexpr step builtin_step(const kernel_entry& entry, const kernel_call& c) noexcept {
  step s{};
  s.op = op::call;
  const op o = entry.builtin;
  if (o == op::call) return s;
  if (o == op::grid_sync) {
    s.op = o;
    return s;
  }
  const std::size_t nb = c.buffers.size();
  if (nb == 0 || nb > 3) return s;
  const std::size_t whole = o == op::dot ? (nb > 1 ? c.buffers[1].size : 0) : c.buffers[0].size;
  if (c.extent != 0 && c.extent != whole) return s;
  s.out = c.buffers[0];
  if (nb > 1) s.in1 = c.buffers[1];
  if (nb > 2) s.in2 = c.buffers[2];
  if (!c.scalars.empty()) s.scalar = c.scalars.front().as<double>();
  s.op = o;
  return s;
}

/// Returns every registered kernel entry of `op` (any backend, type, variant).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const kernel_entry* const> kernels_of(std::string_view op) noexcept;

/// Returns the backends that have a kernel for `op` over `type`, as "cpu, vulkan".
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string kernel_backends(std::string_view op, element_type type);

/// Finds the kernel a call runs on `backend`: the named variant, or the
/// default (the only variant when there is one) when `variant` is empty.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<const kernel_entry*> find_kernel(std::string_view op,
                                                                                std::string_view backend,
                                                                                element_type type,
                                                                                std::string_view variant = {});

/// Checks a call against its op's registered signature: the op exists, the
/// arity, the element and scalar types, the lengths; returns the extent.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::size_t> check_call(const kernel_call& call);

/// Returns the signature a call of `op` over `type` is checked against: the
/// first registered entry's (every entry of one op and type shares it, see
/// check_kernels); for a built-in op with no entry linked, its built-in
/// signature; empty when the op is unknown.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const kernel_param> signature_for(std::string_view op,
                                                                                  element_type type) noexcept;

/// Checks the arguments of a call of `op` against `signature` (the arity, the
/// element and scalar types, the lengths) and returns the extent. check_call
/// and program validation of built-in steps both end here, so a built-in op
/// and a user kernel are refused with the same errors.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::size_t> check_arguments(std::string_view op,
                                                                            std::span<const kernel_param> signature,
                                                                            std::span<const buffer> buffers,
                                                                            std::span<const scalar_arg> scalars,
                                                                            std::size_t extent = 0);

/// Checks a program's steps against the kernel inventory's signatures:
/// non-empty, not oversized, buffers present and of one element type, lengths
/// that agree, finite scalars; calls by check_call.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> validate(std::span<const step> steps);
/// Checks a program (see the span overload). A program found valid is not
/// checked again until it gains a step or the kernel inventory changes (a
/// module loaded or unloaded): dispatching it again costs no check.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> validate(const program& p);

/// Writes the scalars of a call, converted to the entry's signature types,
/// into `out` (at least as many as the call has); allocates nothing.
ROSTER_API ROSTER_INLINE void convert_scalars(const kernel_entry& entry, const kernel_call& call,
                                              std::span<scalar_arg> out) noexcept;

/// Returns the extent of a call already checked with check_call: its own, else
/// the length of the first buffer the signature sizes by the extent.
[[nodiscard]] constexpr std::size_t call_extent(const kernel_entry& entry, const kernel_call& call) noexcept {
  if (call.extent != 0) return call.extent;
  std::size_t bi = 0;
  for (const auto& p : entry.signature) {
    if (!p.is_buffer) continue;
    if (p.length == length::extent) return call.buffers[bi].size;
    ++bi;
  }
  return 0;
}

namespace detail {
// kernel_args, named through a template parameter: the bodies of
// call_arguments' templates name it this way, so the compiler checks them
// (expected<kernel_args>'s conversions, the span of the buffers) where a
// backend builds arguments, not in every file that includes roster (checked
// there, they cost each such file about 5% of what its standard headers cost
// to compile: bench/compile_cost).
template <class MemoryOf>
struct kernel_args_for {
  using type = kernel_args;
};
template <class MemoryOf>
using kernel_args_for_t = typename kernel_args_for<MemoryOf>::type;
}  // namespace detail

/// The arguments of one kernel call as its entry point receives them, built
/// here for every backend: each buffer's memory, the scalars converted to the
/// signature's types, the extent. Up to 16 buffers and 16 scalars need no
/// allocation; a backend keeps one on its stack per call.
class call_arguments {
 public:
  /// Builds the arguments of a validated call of `entry`. `memory_of(buffer)`
  /// returns the buffer's memory on this backend, or null where the backend's
  /// API binds buffers itself; with `need_memory`, a null is an error.
  template <class MemoryOf>
  [[nodiscard]] expected<detail::kernel_args_for_t<MemoryOf>> build(const kernel_entry& entry, const kernel_call& call,
                                                                    MemoryOf&& memory_of, bool need_memory = true) {
    scalar_arg* scal = scalars(call.scalars.size());
    convert_scalars(entry, call, std::span<scalar_arg>(scal, call.scalars.size()));
    return gather(call.buffers, std::span<const scalar_arg>(scal, call.scalars.size()), call_extent(entry, call),
                  memory_of, need_memory);
  }
  /// Builds the arguments of checked buffers and scalars over [0, extent)
  /// (static kernel calls, whose signature is checked as they compile).
  template <class MemoryOf>
  [[nodiscard]] expected<detail::kernel_args_for_t<MemoryOf>> build(std::span<const buffer> buffers,
                                                                    std::span<const scalar_arg> scalars,
                                                                    std::size_t extent, MemoryOf&& memory_of,
                                                                    bool need_memory = true) {
    return gather(buffers, scalars, extent, memory_of, need_memory);
  }

 private:
  template <class MemoryOf>
  expected<detail::kernel_args_for_t<MemoryOf>> gather(std::span<const buffer> buffers,
                                                       std::span<const scalar_arg> scalars, std::size_t extent,
                                                       MemoryOf& memory_of, bool need_memory) {
    kernel_buffer* bufs = buffers.size() <= small ? small_buffers_.at : more_buffers(buffers.size());
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      void* data = memory_of(buffers[i]);
      if (data == nullptr && need_memory) return buffer_not_live(i);
      ::new (static_cast<void*>(bufs + i)) kernel_buffer{data, buffers[i].size, buffers[i].type};
    }
    return detail::kernel_args_for_t<MemoryOf>{std::span<const kernel_buffer>(bufs, buffers.size()), scalars, extent};
  }
  scalar_arg* scalars(std::size_t n) { return n <= small ? small_scalars_.at : more_scalars(n); }
  // Past 16 buffers or scalars, the vectors grown to n: out of line, so the
  // vectors' growth is instantiated in the library and the common call stays
  // inline.
  ROSTER_API ROSTER_INLINE kernel_buffer* more_buffers(std::size_t n);
  ROSTER_API ROSTER_INLINE scalar_arg* more_scalars(std::size_t n);
  [[nodiscard]] static ROSTER_API ROSTER_INLINE error buffer_not_live(std::size_t index);

  // Room for 16 buffers and 16 scalars, left unwritten until a call fills
  // what it uses: setting all 32 to their defaults first cost the static
  // kernel call (bench-check static-kernel-dispatch-16) several nanoseconds.
  static constexpr std::size_t small = 16;
  template <class T>
  union room {
    room() noexcept {}
    T at[small];
  };
  room<kernel_buffer> small_buffers_;
  room<scalar_arg> small_scalars_;
  std::vector<kernel_buffer> more_buffers_;
  std::vector<scalar_arg> more_scalars_;
};

/// Returns the size class of an extent in tuning records: floor(log2(extent)),
/// 0 for an extent of 0 or 1, so 2^20 and 2^21 - 1 share one class.
[[nodiscard]] constexpr std::uint32_t size_class(std::size_t extent) noexcept {
  return extent == 0 ? 0u : static_cast<std::uint32_t>(std::bit_width(extent) - 1);
}

/// A measured choice among an op's variants on one device (roster::tune_kernel):
/// the variant that a call of this element type and size class runs when it
/// names none. Kept in tuning records; acquire gives a device the current ones.
struct kernel_choice {
  std::string op;
  element_type type = element_type::f64;
  std::uint32_t size_class = 0;  ///< roster::size_class of the extent measured
  std::string variant;           ///< the winner (the baseline when none beat it)
  std::string baseline;          ///< the default it was compared with
  double variant_ns = 0.0;       ///< median time of the winner
  double baseline_ns = 0.0;      ///< median time of the baseline
  double spread = 0.0;           ///< the larger relative spread of the two (roster/noise_rule.hpp)
  friend bool operator==(const kernel_choice&, const kernel_choice&) = default;
};

/// Checks the kernel inventory: no two entries with one key, at most one
/// default per op, backend and type, one signature per op and type.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> check_kernels();

}  // namespace roster

/// Registers a constinit roster::kernel_entry; use at namespace scope.
#define ROSTER_KERNEL(entry) ROSTER_SUBMIT(::roster::kernel_entry, entry)

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/kernels-inl.hpp>
#endif
