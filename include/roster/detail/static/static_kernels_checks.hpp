#pragma once
// Private: the compile-time checks of roster::static_kernels, each its own
// template so the compiler's note names what is wrong beside the message.

#include <roster/kernels.hpp>
#include <roster/static_registry.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace roster {

template <class T>
struct typed_buffer;
template <fixed_string Op, fixed_string Backend, fixed_string Variant, bool IsDefault, auto Entry, class... P>
struct static_kernel;

namespace detail {

template <class K>
inline constexpr bool is_static_kernel_v = false;
template <fixed_string O, fixed_string B, fixed_string V, bool D, auto E, class... P>
inline constexpr bool is_static_kernel_v<static_kernel<O, B, V, D, E, P...>> = true;

template <class R>
inline constexpr bool is_static_registry_v = false;
template <class... Bs>
inline constexpr bool is_static_registry_v<static_registry<Bs...>> = true;

template <class T>
inline constexpr bool is_typed_buffer_v = false;
template <class T>
inline constexpr bool is_typed_buffer_v<typed_buffer<T>> = true;

template <class A>
constexpr element_type typed_element() noexcept {
  if constexpr (is_typed_buffer_v<A>) return element_of<typename A::element>();
  else return element_type::f64;
}

// The checks when the list is named; each its own template, so the note
// names the offending type.
template <class R>
struct static_kernels_registry_check {
  static_assert(is_static_registry_v<R>,
                "roster::static_kernels: the first argument is not a roster::static_registry. Fix: write "
                "static_kernels<roster::static_registry<B...>, K...>, the backends first.");
  static constexpr bool value = is_static_registry_v<R>;
};

template <class K>
struct static_kernel_type_check {
  static_assert(is_static_kernel_v<K>,
                "roster::static_kernels: a listed type is not a roster::static_kernel (the type is named in the "
                "'required from' note). Fix: describe the kernel with roster::static_kernel<op, backend, "
                "variant, default flag, entry, signature...>.");
  static constexpr bool value = is_static_kernel_v<K>;
};

template <class R, class K, bool known = is_static_registry_v<R> && is_static_kernel_v<K>>
struct static_kernel_backend_check {
  static constexpr bool value = true;  // already reported
};
template <class R, class K>
struct static_kernel_backend_check<R, K, true> {
  static constexpr bool listed = R::index_of(K::backend) < R::size;
  static_assert(listed,
                "roster::static_kernels: a kernel names a backend that the registry does not list (the kernel "
                "is named in the 'required from' note). Fix: list that backend's type in the static_registry, "
                "or correct the kernel's backend id.");
  static constexpr bool value = listed;
};

struct static_kernel_key {
  std::string_view op, backend, variant;
  element_type type = element_type::f64;
  bool is_default = false;
  std::size_t arity = 0;
  std::span<const kernel_param> signature{};
};

template <class K>
constexpr static_kernel_key key_of() noexcept {
  if constexpr (is_static_kernel_v<K>)
    return {K::op, K::backend, K::variant, K::type, K::is_default, K::arity, K::signature};
  else
    return {};
}

template <class... Ks>
constexpr std::size_t first_duplicate_kernel() noexcept {
  constexpr std::size_t n = sizeof...(Ks);
  if constexpr (n < 2) {
    return n;
  } else {
    constexpr std::array<static_kernel_key, n> k{key_of<Ks>()...};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (k[i].op == k[j].op && k[i].backend == k[j].backend && k[i].type == k[j].type &&
            k[i].variant == k[j].variant)
          return j;
    return n;
  }
}

// Instantiated only for a duplicate, so the note shows it:
// "required from struct duplicate_static_kernel<fixed_string<5>{"axpy"}, ..."cpu"..., f64, ..."plain"...>".
template <fixed_string op, fixed_string backend, element_type type, fixed_string variant>
struct duplicate_static_kernel {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels: two kernels share one op, backend, element type and variant (they are "
                "the arguments of duplicate_static_kernel in the note). Fix: give each variant its own name, or "
                "list the kernel once.");
  static constexpr bool value = false;
};

template <class... Ks>
struct static_kernel_duplicate_check {
  static constexpr std::size_t dup = first_duplicate_kernel<Ks...>();
  static constexpr bool check() noexcept {
    if constexpr (dup == sizeof...(Ks)) {
      return true;
    } else {
      constexpr std::array<static_kernel_key, sizeof...(Ks)> k{key_of<Ks>()...};
      return duplicate_static_kernel<to_fixed<k[dup].op.size()>(k[dup].op),
                                     to_fixed<k[dup].backend.size()>(k[dup].backend), k[dup].type,
                                     to_fixed<k[dup].variant.size()>(k[dup].variant)>::value;
    }
  }
  static constexpr bool value = check();
};

constexpr bool same_signature(std::span<const kernel_param> a, std::span<const kernel_param> b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].is_buffer != b[i].is_buffer || a[i].mode != b[i].mode || a[i].type != b[i].type ||
        a[i].length != b[i].length || a[i].scalar != b[i].scalar)
      return false;
  return true;
}

// Returns the position of the second of two kernels that break a rule of the
// kernel inventory (check_kernels): two defaults for one op, backend and
// type (rule 0), two signatures for one op and type (rule 1); or the count.
template <int rule, class... Ks>
constexpr std::size_t first_conflict() noexcept {
  constexpr std::size_t n = sizeof...(Ks);
  if constexpr (n < 2) {
    return n;
  } else {
    constexpr std::array<static_kernel_key, n> k{key_of<Ks>()...};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        if (k[i].op != k[j].op || k[i].type != k[j].type) continue;
        if (rule == 0 && k[i].backend == k[j].backend && k[i].is_default && k[j].is_default) return j;
        if (rule == 1 && !same_signature(k[i].signature, k[j].signature)) return j;
      }
    return n;
  }
}

template <fixed_string op, fixed_string backend, element_type type>
struct two_static_kernel_defaults {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels: two variants of one op, backend and element type are both the default "
                "(they are the arguments of two_static_kernel_defaults in the note). Fix: mark one "
                "roster::default_variant and the others roster::other_variant.");
  static constexpr bool value = false;
};
template <fixed_string op, element_type type>
struct two_static_kernel_signatures {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels: two kernels of one op and element type have different signatures (op "
                "and type are the arguments of two_static_kernel_signatures in the note). Fix: give every variant "
                "and backend of one op and type the same parameters.");
  static constexpr bool value = false;
};

template <class... Ks>
struct static_kernel_rules_check {
  static constexpr std::size_t defaults = first_conflict<0, Ks...>();
  static constexpr std::size_t signatures = first_conflict<1, Ks...>();
  static constexpr bool check() noexcept {
    constexpr std::array<static_kernel_key, sizeof...(Ks)> k{key_of<Ks>()...};
    if constexpr (defaults != sizeof...(Ks))
      return two_static_kernel_defaults<to_fixed<k[defaults].op.size()>(k[defaults].op),
                                        to_fixed<k[defaults].backend.size()>(k[defaults].backend),
                                        k[defaults].type>::value;
    else if constexpr (signatures != sizeof...(Ks))
      return two_static_kernel_signatures<to_fixed<k[signatures].op.size()>(k[signatures].op),
                                          k[signatures].type>::value;
    else
      return true;
  }
  static constexpr bool value = check();
};

// The checks at a call; each is instantiated only when it fails, so the note
// shows the op (and the argument's position and types) next to the message.
template <fixed_string op>
struct unknown_static_kernel_op {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: no kernel in this list has that op (the op is the argument of "
                "unknown_static_kernel_op in the note). Fix: list a roster::static_kernel for it in "
                "static_kernels<...>, or check the op's spelling (ops are case-sensitive).");
  static constexpr bool value = false;
};
template <fixed_string op, class Device>
struct static_kernel_not_on_device {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: the list has no kernel for that op on the device's backend (op "
                "and device type are in the note), or the device type is no listed backend's device_type. Fix: "
                "list a kernel for the op on that backend, or call it on a device of a backend that has one.");
  static constexpr bool value = false;
};
template <fixed_string op, class Device>
struct static_kernel_ambiguous_backend {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: two listed backends share the device type and both have the "
                "op (op and device type are in the note). Fix: list the op's kernels for one of them only, or "
                "give each backend its own device type.");
  static constexpr bool value = false;
};
template <fixed_string op, class Argument>
struct static_kernel_first_argument {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: argument 0 is not a roster::typed_buffer (its type is in the "
                "note); a kernel's first parameter is a buffer. Fix: pass a typed_buffer<T>, from "
                "roster::allocate_typed<T>(device, n) or typed_buffer<T>::of(buffer).");
  static constexpr bool value = false;
};
template <fixed_string op, element_type passed>
struct static_kernel_element_type {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: the list has no kernel for the op over argument 0's element "
                "type on this backend (op and element type are in the note). Fix: pass buffers of an element "
                "type the op is listed for, or list a kernel for this one.");
  static constexpr bool value = false;
};
template <fixed_string op, fixed_string variant>
struct unknown_static_kernel_variant {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op, variant>: the op has no variant of that name for this backend "
                "and element type (op and variant are in the note). Fix: name a listed variant, or leave the "
                "variant out to run the default.");
  static constexpr bool value = false;
};
template <fixed_string op>
struct static_kernel_no_default {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: the op has several variants for this backend and element type "
                "and none is the default (the op is in the note). Fix: mark one roster::default_variant, or name "
                "a variant: call<op, variant>(...).");
  static constexpr bool value = false;
};
template <fixed_string op, class Device>
struct static_kernel_no_entry {
  static_assert(op.view().size() == std::size_t(-1),
                "roster::static_kernels::call<op>: the device type cannot run this kernel's entry point statically "
                "(op and device type are in the note; the device has no run_kernel(entry, buffers, scalars, "
                "extent) for it). Fix: call the kernel through a program (program::call) on this device, or list "
                "a kernel with an entry point this device runs.");
  static constexpr bool value = false;
};
template <fixed_string op, std::size_t passed, std::size_t takes>
struct static_kernel_arity {
  static_assert(passed == std::size_t(-1),
                "roster::static_kernels::call<op>: the number of arguments differs from the kernel's signature "
                "(op, arguments passed and parameters taken are in the note). Fix: pass exactly the signature's "
                "parameters, in order.");
  static constexpr bool value = false;
};
template <fixed_string op, std::size_t index, class Argument>
struct static_kernel_buffer_argument {
  static_assert(index == std::size_t(-1),
                "roster::static_kernels::call<op>: an argument in a buffer parameter's place is not a "
                "roster::typed_buffer (op, position and type are in the note). Fix: pass a typed_buffer<T>, from "
                "roster::allocate_typed<T>(device, n) or typed_buffer<T>::of(buffer).");
  static constexpr bool value = false;
};
template <fixed_string op, std::size_t index, class Passed, class Expected>
struct static_kernel_buffer_element {
  static_assert(index == std::size_t(-1),
                "roster::static_kernels::call<op>: a buffer argument's element type differs from its parameter's "
                "(op, position, the element type passed and the one expected are in the note). Fix: pass a "
                "typed_buffer of the parameter's element type.");
  static constexpr bool value = false;
};
template <fixed_string op, std::size_t index, class Passed, class Expected>
struct static_kernel_scalar_type {
  static_assert(index == std::size_t(-1),
                "roster::static_kernels::call<op>: a scalar argument's type does not fit its parameter (op, "
                "position, the type passed and the one expected are in the note): a float or double parameter "
                "takes a floating-point value, an integer parameter an integer. Fix: pass e.g. 2.0 for a "
                "floating-point parameter, std::uint32_t{2} for an integer one.");
  static constexpr bool value = false;
};

template <class P>
using param_value_t = std::conditional_t<
    P::param.scalar == scalar_type::f32, float,
    std::conditional_t<P::param.scalar == scalar_type::f64, double,
                       std::conditional_t<P::param.scalar == scalar_type::i32, std::int32_t, std::uint32_t>>>;

template <class P>
using param_element_t = std::conditional_t<P::param.type == element_type::f32, float, double>;

// What is wrong with argument A in parameter P's place: 0 nothing, 1 not a
// typed buffer, 2 another element type, 3 a scalar of the wrong kind.
template <class P, class A>
constexpr int arg_problem() noexcept {
  if constexpr (P::param.is_buffer) {
    if constexpr (!is_typed_buffer_v<A>) return 1;
    else return std::is_same_v<typename A::element, param_element_t<P>> ? 0 : 2;
  } else {
    constexpr bool floating = P::param.scalar == scalar_type::f32 || P::param.scalar == scalar_type::f64;
    return (floating ? std::is_floating_point_v<A> : std::is_integral_v<A> && !std::is_same_v<A, bool>) ? 0 : 3;
  }
}

// Returns the position of the first argument that does not fit, or its count.
template <class Params, class... A, std::size_t... I>
constexpr std::size_t first_bad_arg(std::index_sequence<I...>) noexcept {
  std::size_t bad = sizeof...(A);
  ((bad == sizeof...(A) && arg_problem<std::tuple_element_t<I, Params>, A>() != 0 ? bad = I : bad), ...);
  return bad;
}

// Instantiates the failure for argument i (the static_assert fires there).
template <fixed_string op, std::size_t i, class P, class A>
void report_arg() noexcept {
  constexpr int problem = arg_problem<P, A>();
  if constexpr (problem == 1)
    (void)static_kernel_buffer_argument<op, i, A>{};
  else if constexpr (problem == 2)
    (void)static_kernel_buffer_element<op, i, typename A::element, param_element_t<P>>{};
  else if constexpr (problem == 3)
    (void)static_kernel_scalar_type<op, i, A, param_value_t<P>>{};
}

// A device's backend ids in the registry: the backends whose device_type is D.
template <class R, class D>
constexpr auto backends_of_device() noexcept {
  return boost::hana::unpack(R::backends, [](auto... t) {
    constexpr std::size_t n = sizeof...(t);
    std::array<std::string_view, n> ids{};
    std::size_t k = 0;
    ((std::is_same_v<typename decltype(t)::type::device_type, D> ? (ids[k++] = static_id<typename decltype(t)::type>(),
                                                                   0)
                                                                 : 0),
     ...);
    return std::pair{ids, k};
  });
}

template <class D>
struct static_kernel_device {
  using type = D;
  static D& of(D& d) noexcept { return d; }
};
template <class Inner>
struct static_kernel_device<grid_sync_split<Inner>> {
  using type = Inner;
  static Inner& of(grid_sync_split<Inner>& d) noexcept { return d.inner(); }
};

inline constexpr std::size_t no_kernel = std::size_t(-1);

// A device that runs kernel K's entry point with no lookup: the hook a
// backend offers for static kernel calls (the CPU device's run_kernel).
template <class D, class K>
concept static_kernel_runner = requires(D& d, std::span<const buffer> b, std::span<const scalar_arg> s,
                                        std::size_t n) {
  { d.run_kernel(K::entry, b, s, n) } -> std::same_as<expected<void>>;
};

}  // namespace detail

}  // namespace roster
