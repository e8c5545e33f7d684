#pragma once
/// Kernels in the compile-time registry: a closed list of kernel types over a
/// static_registry, checked when named and at each call, and called on a
/// device of known final type with no lookup and no virtual call.
///
/// Boost.Hana comes in through static_registry.hpp: no header that a .cu file
/// includes may include this one.

#include <roster/kernels.hpp>
#include <roster/static_registry.hpp>
#include <roster/detail/static/static_kernels_checks.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace roster {

/// A buffer handle with its element type in its type, so that a static
/// kernel call checks the element type as it compiles.
template <class T>
struct typed_buffer {
  static_assert(is_element_v<T>, "roster::typed_buffer<T>: T is float or double");
  using element = T;
  buffer handle{};
  /// Returns b as a typed_buffer<T>, or an error when its element type is not T.
  [[nodiscard]] static expected<typed_buffer> of(const buffer& b) {
    if (b.type != element_of<T>())
      return make_error(errc::invalid_argument,
                        "typed_buffer<" + std::string(to_string(element_of<T>())) + ">::of: the buffer holds " +
                            std::string(to_string(b.type)),
                        "type it with its own element type, typed_buffer<" + std::string(to_string(b.type)) +
                            ">::of(b)");
    return typed_buffer{b};
  }
  /// Returns the untyped handle, for a program's steps.
  operator const buffer&() const noexcept { return handle; }  // NOLINT: implicit on purpose
};

/// Allocates n elements of T on device d, as a typed_buffer<T>.
template <class T, class D>
[[nodiscard]] expected<typed_buffer<T>> allocate_typed(D& d, std::size_t n) {
  auto b = d.template allocate<T>(n);
  if (!b) return std::move(b).error();
  return typed_buffer<T>{*b};
}

/// One kernel for the compile-time registry: op name, backend id, variant,
/// default flag (roster::default_variant or roster::other_variant), entry
/// point (a function of host_kernel_fn's signature) and signature P...
/// (roster::read<T>, write<T>, read_write<T>, scalar<T>).
template <fixed_string Op, fixed_string Backend, fixed_string Variant, bool IsDefault, auto Entry, class... P>
struct static_kernel {
  static_assert(sizeof...(P) > 0,
                "roster::static_kernel: the signature is empty. Fix: list the parameters after the entry "
                "point, a buffer first, e.g. roster::read_write<double>, roster::scalar<double>.");
  static constexpr std::string_view op = Op.view();
  static constexpr std::string_view backend = Backend.view();
  static constexpr std::string_view variant = Variant.view();
  static constexpr bool is_default = IsDefault;
  static constexpr auto entry = Entry;
  /// The parameters, in order.
  using params = std::tuple<P...>;
  static constexpr std::size_t arity = sizeof...(P);
  /// The signature as the kernel inventory holds it.
  static constexpr std::span<const kernel_param> signature{signature_of<P...>};
  static_assert(signature_of<P...>[0].is_buffer,
                "roster::static_kernel: the signature starts with a scalar. Fix: put a buffer parameter first; "
                "its element type is the kernel's.");
  /// The element type of the first buffer: the kernel's type.
  static constexpr element_type type = signature_of<P...>[0].type;
};

/// A closed, compile-time list of kernels over the backends of static
/// registry R, called with static dispatch.
///
/// Checked when the type is named: R is a static_registry, every K a
/// static_kernel on one of R's backends, and no two share op, backend,
/// element type and variant. Checked at each call: the op exists on the
/// device's backend, the arity, each buffer's element type, each scalar's
/// type, the variant.
template <class R, class... Ks>
class static_kernels {
  static constexpr bool registry_ = detail::static_kernels_registry_check<R>::value;
  static constexpr bool typed_ = (detail::static_kernel_type_check<Ks>::value && ...);
  static constexpr bool backends_ = (detail::static_kernel_backend_check<R, Ks>::value && ...);
  static constexpr bool valid_ = registry_ && typed_ && backends_ && detail::static_kernel_duplicate_check<Ks...>::value &&
                                 detail::static_kernel_rules_check<Ks...>::value;
  static constexpr std::array<detail::static_kernel_key, sizeof...(Ks)> keys_{detail::key_of<Ks>()...};

  // Deduced, so naming the class runs the checks (as static_registry does).
  static constexpr auto checked() {
    if constexpr (valid_)
      return boost::hana::tuple_t<Ks...>;
    else
      return boost::hana::tuple_t<>;
  }

 public:
  /// The backend registry.
  using registry = R;
  /// The kernel types, as hana::type_c<K>, in the order listed.
  static constexpr auto kernels = checked();
  /// Number of kernels.
  static constexpr std::size_t size = sizeof...(Ks);
  /// What index_of returns when no kernel fits.
  static constexpr std::size_t npos = detail::no_kernel;

  /// Returns whether some listed kernel has op `op`.
  [[nodiscard]] static constexpr bool contains(std::string_view op) noexcept {
    for (const auto& k : keys_)
      if (k.op == op) return true;
    return false;
  }

  /// Returns the position of the kernel a call of `op` runs on `backend` over
  /// `type`: the named variant, else the default, else the only one; or npos.
  [[nodiscard]] static constexpr std::size_t index_of(std::string_view op, std::string_view backend,
                                                      element_type type, std::string_view variant = {}) noexcept {
    std::size_t only = detail::no_kernel, dflt = detail::no_kernel, count = 0;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      const auto& k = keys_[i];
      if (k.op != op || k.backend != backend || k.type != type) continue;
      if (!variant.empty()) {
        if (k.variant == variant) return i;
        continue;
      }
      ++count;
      only = i;
      if (k.is_default && dflt == detail::no_kernel) dflt = i;
    }
    if (variant.empty() && dflt != detail::no_kernel) return dflt;
    return variant.empty() && count == 1 ? only : detail::no_kernel;
  }

  /// Runs kernel `op` (variant `variant`, else the default) on device d with
  /// args in signature order, over the length of its extent buffers: no
  /// lookup, no virtual call. Buffers are typed_buffer<T>.
  template <fixed_string op, fixed_string variant = "", static_device D, class... A>
  [[nodiscard]] static expected<void> call(D& d, const A&... args) {
    return run<op, variant>(d, 0, args...);
  }
  /// Runs kernel `op` as call does, over [0, extent).
  template <fixed_string op, fixed_string variant = "", static_device D, class... A>
  [[nodiscard]] static expected<void> call_over(D& d, std::size_t extent, const A&... args) {
    return run<op, variant>(d, extent, args...);
  }

 private:
  template <std::size_t I>
  using kernel_at = std::tuple_element_t<I, std::tuple<Ks...>>;

  template <fixed_string op, class D>
  static constexpr auto backend_for() noexcept {
    constexpr auto ids = detail::backends_of_device<R, D>();
    std::string_view found{};
    std::size_t count = 0;
    for (std::size_t i = 0; i < ids.second; ++i)
      for (const auto& k : keys_)
        if (k.op == op.view() && k.backend == ids.first[i]) {
          if (found != ids.first[i]) ++count;
          found = ids.first[i];
          break;
        }
    return std::pair{found, count};
  }

  enum class problem { none, op, device, ambiguous, first_argument, element, variant, no_default, arity, argument };
  struct resolution {
    std::size_t index = detail::no_kernel;
    problem what = problem::none;
  };

  // Resolves the kernel at compile time, or names the first problem; report()
  // turns the problem into its static_assert. Kept apart so that the failed
  // assertion feeds no constant expression (Clang would then add errors).
  template <fixed_string op, fixed_string variant, class D, class... A>
  static constexpr resolution resolve() noexcept {
    using Dev = typename detail::static_kernel_device<D>::type;
    constexpr auto be = backend_for<op, Dev>();
    using first = std::tuple_element_t<0, std::tuple<A..., void>>;
    if constexpr (!contains(op.view())) {
      return {detail::no_kernel, problem::op};
    } else if constexpr (be.second == 0) {
      return {detail::no_kernel, problem::device};
    } else if constexpr (be.second > 1) {
      return {detail::no_kernel, problem::ambiguous};
    } else if constexpr (!detail::is_typed_buffer_v<first>) {
      return {detail::no_kernel, problem::first_argument};
    } else if constexpr (!has_type(op.view(), be.first, detail::typed_element<first>())) {
      return {detail::no_kernel, problem::element};
    } else {
      constexpr std::size_t i = index_of(op.view(), be.first, detail::typed_element<first>(), variant.view());
      if constexpr (i == detail::no_kernel)
        return {i, variant.view().empty() ? problem::no_default : problem::variant};
      else if constexpr (kernel_at<i>::arity != sizeof...(A))
        return {i, problem::arity};
      else if constexpr (detail::first_bad_arg<typename kernel_at<i>::params, A...>(
                             std::index_sequence_for<A...>{}) != sizeof...(A))
        return {i, problem::argument};
      else
        return {i, problem::none};
    }
  }

  template <fixed_string op, fixed_string variant, class D, class... A>
  static void report() noexcept {
    constexpr resolution r = resolve<op, variant, D, A...>();
    using Dev = typename detail::static_kernel_device<D>::type;
    using first = std::tuple_element_t<0, std::tuple<A..., void>>;
    if constexpr (r.what == problem::op) {
      (void)detail::unknown_static_kernel_op<op>{};
    } else if constexpr (r.what == problem::device) {
      (void)detail::static_kernel_not_on_device<op, Dev>{};
    } else if constexpr (r.what == problem::ambiguous) {
      (void)detail::static_kernel_ambiguous_backend<op, Dev>{};
    } else if constexpr (r.what == problem::first_argument) {
      (void)detail::static_kernel_first_argument<op, first>{};
    } else if constexpr (r.what == problem::element) {
      (void)detail::static_kernel_element_type<op, detail::typed_element<first>()>{};
    } else if constexpr (r.what == problem::variant) {
      (void)detail::unknown_static_kernel_variant<op, variant>{};
    } else if constexpr (r.what == problem::no_default) {
      (void)detail::static_kernel_no_default<op>{};
    } else if constexpr (r.what == problem::arity) {
      (void)detail::static_kernel_arity<op, sizeof...(A), kernel_at<r.index>::arity>{};
    } else if constexpr (r.what == problem::argument) {
      using params = typename kernel_at<r.index>::params;
      constexpr std::size_t j = detail::first_bad_arg<params, A...>(std::index_sequence_for<A...>{});
      detail::report_arg<op, j, std::tuple_element_t<j, params>, std::tuple_element_t<j, std::tuple<A...>>>();
    }
  }

  static constexpr bool has_type(std::string_view op, std::string_view backend, element_type type) noexcept {
    for (const auto& k : keys_)
      if (k.op == op && k.backend == backend && k.type == type) return true;
    return false;
  }

  // Places one argument; returns false for a scalar its parameter cannot
  // hold (not finite, out of range). Builds no error: this is the hit path.
  template <class P, class A>
  static bool add(const A& a, buffer* bufs, std::size_t& nb, scalar_arg* scal, std::size_t& ns) noexcept {
    if constexpr (P::param.is_buffer) {
      bufs[nb++] = a.handle;
      return true;
    } else {
      using V = detail::param_value_t<P>;
      bool fits = true;
      if constexpr (std::is_floating_point_v<V>)
        fits = std::isfinite(a) &&
               (!std::is_same_v<V, float> || std::fabs(static_cast<double>(a)) <= std::numeric_limits<float>::max());
      else if constexpr (!std::is_same_v<A, V>)
        fits = std::in_range<V>(a);
      if (!fits) return false;
      scal[ns++] = scalar_arg(static_cast<V>(a));
      return true;
    }
  }

  // Returns the number of scalars placed before the first that does not fit, or -1 when all fit.
  template <class K, class... A, std::size_t... I>
  static std::ptrdiff_t pack(buffer* bufs, scalar_arg* scal, std::index_sequence<I...>, const A&... args) noexcept {
    std::size_t nb = 0, ns = 0;
    const bool ok = (add<std::tuple_element_t<I, typename K::params>>(args, bufs, nb, scal, ns) && ...);
    return ok ? -1 : static_cast<std::ptrdiff_t>(ns);
  }

  template <fixed_string op, fixed_string variant, class D, class... A>
  static expected<void> run(D& outer, std::size_t extent, const A&... args) {
    static_assert(valid_, "roster::static_kernels: the list is invalid; see the message above");
    constexpr resolution r = resolve<op, variant, D, A...>();
    if constexpr (r.what != problem::none) {
      report<op, variant, D, A...>();  // a static_assert fires there
      return make_error(errc::internal, "unreachable", "none");
    } else if constexpr (!detail::static_kernel_runner<typename detail::static_kernel_device<D>::type,
                                                       kernel_at<r.index>>) {
      (void)detail::static_kernel_no_entry<op, typename detail::static_kernel_device<D>::type>{};
      return make_error(errc::internal, "unreachable", "none");
    } else {
      constexpr std::size_t i = r.index;
      using K = kernel_at<i>;
      auto& d = detail::static_kernel_device<D>::of(outer);
      constexpr std::size_t nb = [] {
        std::size_t n = 0;
        for (const auto& p : K::signature) n += p.is_buffer;
        return n;
      }();
      buffer bufs[nb];
      scalar_arg scal[K::arity - nb + 1];
      if (const auto bad = pack<K>(bufs, scal, std::index_sequence_for<A...>{}, args...); bad >= 0)
        return make_error(errc::invalid_argument,
                          d.adapter().spec() + ": call of '" + std::string(op.view()) + "': scalar " +
                              std::to_string(bad) + " is not finite or does not fit its parameter",
                          "pass a finite value within the parameter's range (a uint32 is not negative)");
      // The extent: the length of the buffers the signature sizes by it.
      std::size_t size = 0;
      bool sized = false;
      std::size_t bi = 0;
      for (const auto& p : K::signature) {
        if (!p.is_buffer) continue;
        const buffer& b = bufs[bi++];
        if (p.length != length::extent) continue;
        if (sized && b.size != size)
          return make_error(errc::invalid_argument,
                            d.adapter().spec() + ": call of '" + std::string(op.view()) + "': buffer " +
                                std::to_string(bi - 1) + " has " + std::to_string(b.size) +
                                " elements, an earlier one " + std::to_string(size),
                            "give every buffer the signature sizes by the extent the same length");
        size = b.size;
        sized = true;
      }
      if (extent == 0) extent = size;
      if (extent == 0 || (sized && extent > size))
        return make_error(errc::invalid_argument,
                          d.adapter().spec() + ": call of '" + std::string(op.view()) + "': the extent " +
                              std::to_string(extent) + " is empty or beyond the buffers' length " +
                              std::to_string(size),
                          sized ? "pass buffers of at least one element, and an extent of at most their length"
                                : "give the index space with call_over(device, extent, ...)");
      return d.run_kernel(K::entry, std::span<const buffer>(bufs, nb),
                          std::span<const scalar_arg>(scal, K::arity - nb), extent);
    }
  }
};

namespace detail {
template <class K>
constexpr kernel_entry static_kernel_entry_of() noexcept {
  kernel_entry e{};
  e.op = K::op;
  e.backend = K::backend;
  e.variant = K::variant;
  e.is_default = K::is_default;
  e.type = K::type;
  e.signature = K::signature;
  // A static kernel's entry point runs on the host over a range of indices:
  // the payload a backend that runs host code takes (roster::host_kernel).
  if constexpr (std::is_convertible_v<decltype(K::entry), host_kernel_fn>)
    e.payload = payload_of(&host_kernel_of<K::entry>);
  return e;
}
template <class K>
inline constexpr kernel_entry static_kernel_entry = static_kernel_entry_of<K>();
}  // namespace detail

}  // namespace roster

/// Registers static kernel K in the link-time kernel inventory too, so
/// program::call finds the same op, backend, variant, signature and entry
/// that static_kernels<..., K, ...> calls. Use once per program, at
/// namespace scope in a .cpp.
#define ROSTER_REGISTER_STATIC_KERNEL(K)                                                   \
  static_assert(::roster::detail::static_kernel_type_check<K>::value,                      \
                "ROSTER_REGISTER_STATIC_KERNEL(" #K "): see the message above");          \
  ROSTER_KERNEL(::roster::detail::static_kernel_entry<K>)
