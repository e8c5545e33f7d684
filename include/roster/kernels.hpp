#pragma once
/// The kernel inventory: users' own kernels, one entry per op, backend,
/// element type and variant, placed in the linker-section inventory with
/// ROSTER_KERNEL and called from a program with program::call.
///
/// An entry is constinit data: nothing runs at start-up. Its entry point
/// depends on the backend: a CPU function called on the pool's threads with a
/// part of the index space, a CUDA host launcher the user compiles with nvcc
/// (so this header needs no CUDA header), or SPIR-V words for Vulkan.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/program.hpp>

#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
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

/// A CPU entry point: runs indices [begin, end) of the call on one pool thread.
using cpu_kernel_fn = void (*)(const kernel_args& args, std::size_t begin, std::size_t end);
/// A CUDA entry point: a host function, compiled with nvcc, that launches the
/// kernel on `cuda_stream` (a cudaStream_t) and returns without waiting.
using cuda_launcher_fn = void (*)(const kernel_args& args, void* cuda_stream);

/// A Vulkan entry point: a compute shader's SPIR-V. Buffers are storage
/// buffers at set 0, bindings 0..n-1 in signature order. The push constants
/// are `uint extent` at offset 0, then each scalar in signature order at its
/// natural alignment (4 bytes, 8 for a double). The dispatch runs
/// ceil(extent / local_size_x) workgroups along x.
struct spirv_kernel {
  std::span<const std::uint32_t> code;
  std::uint32_t local_size_x = 64;  ///< the shader's local_size_x
  std::string_view entry = "main";
};

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
  std::string_view backend;  ///< "cpu", "cuda", "vulkan"
  std::string_view variant;  ///< e.g. "plain", "tiled"
  bool is_default = false;   ///< runs when a call names no variant
  element_type type = element_type::f64;  ///< the first buffer's element type
  std::span<const kernel_param> signature;
  cpu_kernel_fn cpu = nullptr;        ///< backend "cpu"
  cuda_launcher_fn cuda = nullptr;    ///< backend "cuda"
  spirv_kernel vulkan{};              ///< backend "vulkan"
  /// The built-in op this entry stands for; op::call for a user kernel. A
  /// dispatch maps a call whose entry is a built-in onto the backend's own
  /// path for that op (fused on the CPU, one launch on CUDA, one submit on
  /// Vulkan), so a built-in entry needs no entry point of its own.
  roster::op builtin = roster::op::call;
  /// Returns the inventory key: op, backend, element type, variant.
  [[nodiscard]] constexpr kernel_key key() const noexcept { return {op, backend, type, variant}; }
};

namespace detail {
template <class... P>
constexpr kernel_entry kernel_of(std::string_view op, std::string_view backend, std::string_view variant,
                                 bool is_default) noexcept {
  static_assert(sizeof...(P) > 0, "a kernel signature needs at least one buffer parameter");
  static_assert(signature_of<P...>[0].is_buffer, "a kernel signature starts with a buffer parameter");
  kernel_entry e{};
  e.op = op;
  e.backend = backend;
  e.variant = variant;
  e.is_default = is_default;
  e.type = signature_of<P...>[0].type;
  e.signature = signature_of<P...>;
  return e;
}
}  // namespace detail

/// Returns a CPU kernel entry with signature P...
template <class... P>
constexpr kernel_entry cpu_kernel(std::string_view op, std::string_view variant, bool is_default,
                                  cpu_kernel_fn fn) noexcept {
  kernel_entry e = detail::kernel_of<P...>(op, "cpu", variant, is_default);
  e.cpu = fn;
  return e;
}
/// Returns a CUDA kernel entry with signature P...
template <class... P>
constexpr kernel_entry cuda_kernel(std::string_view op, std::string_view variant, bool is_default,
                                   cuda_launcher_fn launcher) noexcept {
  kernel_entry e = detail::kernel_of<P...>(op, "cuda", variant, is_default);
  e.cuda = launcher;
  return e;
}
/// Returns a Vulkan kernel entry with signature P...
template <class... P>
constexpr kernel_entry vulkan_kernel(std::string_view op, std::string_view variant, bool is_default,
                                     spirv_kernel code) noexcept {
  kernel_entry e = detail::kernel_of<P...>(op, "vulkan", variant, is_default);
  e.vulkan = code;
  return e;
}

namespace detail {
template <class E, class... P>
constexpr kernel_entry cpu_kernel_for(std::string_view op, std::string_view variant, bool is_default,
                                      cpu_kernel_fn fn) noexcept {
  return cpu_kernel<typename with_elem<E, P>::type...>(op, variant, is_default, fn);
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

/// The variant name of the entries for roster's built-in ops.
inline constexpr std::string_view builtin_variant = "builtin";

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

/// Returns the built-in op named `name` ("triad"), or op::call when none is.
constexpr op builtin_op(std::string_view name) noexcept {
  for (std::size_t o = 0; o < op_count; ++o)
    if (to_string(static_cast<op>(o)) == name) return static_cast<op>(o);
  return op::call;
}

/// Returns the inventory entry of built-in op `o` over T on `backend`: variant
/// "builtin", the default, with the op's signature and `fn` as its CPU entry
/// point (null on backends whose dispatch runs the op on its own path).
template <class T>
  requires is_element_v<T>
constexpr kernel_entry builtin_kernel(op o, std::string_view backend, cpu_kernel_fn fn = nullptr) noexcept {
  kernel_entry e{};
  e.op = to_string(o);
  e.backend = backend;
  e.variant = builtin_variant;
  e.is_default = true;
  e.type = element_of<T>();
  e.signature = builtin_signature<T>(o);
  e.cpu = fn;
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

/// Returns the scalars of a call converted to the entry's signature types.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<scalar_arg> converted_scalars(const kernel_entry& entry,
                                                                               const kernel_call& call);

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
  double spread = 0.0;           ///< the larger relative spread of the two (detail/decision.hpp)
  friend bool operator==(const kernel_choice&, const kernel_choice&) = default;
};

/// Checks the kernel inventory: no two entries with one key, at most one
/// default per op, backend and type, one signature per op and type.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> check_kernels();

}  // namespace roster

/// Registers a constinit roster::kernel_entry; use at namespace scope.
#define ROSTER_KERNEL(entry) ROSTER_SUBMIT(::roster::kernel_entry, entry)

#define ROSTER_IMPL_BUILTIN_KERNEL(name, backend, o, f32_fn, f64_fn)                                       \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f32) =                              \
      ::roster::builtin_kernel<float>(o, backend, f32_fn);                                                 \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f64) =                              \
      ::roster::builtin_kernel<double>(o, backend, f64_fn);                                                \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f32));                                                              \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f64))

/// Registers built-in op `o` (a roster::op) on `backend` for float and double,
/// variant "builtin", the default, with no entry point: the backend's dispatch
/// runs it on its own path. A backend's built-in ops are inventory entries
/// like users' kernels; the router passes over a backend that lacks one.
#define ROSTER_BUILTIN_KERNEL(backend, o) \
  ROSTER_IMPL_BUILTIN_KERNEL(ROSTER_IMPL_CAT(roster_builtin_kernel_, __COUNTER__), backend, o, nullptr, nullptr)

/// Registers built-in op `o` on `backend` with CPU entry point template `fn`
/// (instantiated for float and double).
#define ROSTER_BUILTIN_CPU_KERNEL(backend, o, fn)                                                \
  ROSTER_IMPL_BUILTIN_KERNEL(ROSTER_IMPL_CAT(roster_builtin_kernel_, __COUNTER__), backend, o, \
                             &fn<float>, &fn<double>)

/// Registers all eight built-in ops on `backend` (ROSTER_BUILTIN_KERNEL each).
#define ROSTER_BUILTIN_KERNELS(backend)                   \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::fill);      \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::copy);      \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::mul);       \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::add);       \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::triad);     \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::nstream);   \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::dot);       \
  ROSTER_BUILTIN_KERNEL(backend, ::roster::op::grid_sync)

#define ROSTER_IMPL_CPU_KERNEL(name, op, variant, is_default, fn, ...)                                     \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f32) =                              \
      ::roster::detail::cpu_kernel_for<float, __VA_ARGS__>(op, variant, is_default, &fn<float>);           \
  static constinit const ::roster::kernel_entry ROSTER_IMPL_CAT(name, _f64) =                              \
      ::roster::detail::cpu_kernel_for<double, __VA_ARGS__>(op, variant, is_default, &fn<double>);         \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f32));                                                              \
  ROSTER_KERNEL(ROSTER_IMPL_CAT(name, _f64))

/// Registers CPU kernel template `fn` for float and double: `op` and
/// `variant` are names, `is_default` roster::default_variant or
/// roster::other_variant, then the signature with roster::elem for the
/// element type, e.g. roster::read_write<roster::elem>, roster::scalar<roster::elem>.
#define ROSTER_CPU_KERNEL(op, variant, is_default, fn, ...) \
  ROSTER_IMPL_CPU_KERNEL(ROSTER_IMPL_CAT(roster_cpu_kernel_, __COUNTER__), op, variant, is_default, fn, __VA_ARGS__)

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/kernels-inl.hpp>
#endif
