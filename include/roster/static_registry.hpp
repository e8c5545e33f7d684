#pragma once
/// The compile-time registry: a closed list of backend types, checked, sorted
/// by rank and searched by id at compile time, with static dispatch.
///
/// Boost.Hana lives here and only here: no header that a .cu file includes
/// may include this one (nvcc is not a supported Hana compiler); the test
/// static-nvcc-headers compiles the CUDA-facing headers with nvcc to prove it.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>

#include <boost/hana/at.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/optional.hpp>
#include <boost/hana/sort.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace roster {

/// A compile-time string usable as a template argument: `reg.get<"cpu">()`.
template <std::size_t N>
struct fixed_string {
  char data[N]{};
  /// Copies a string literal.
  constexpr fixed_string(const char (&s)[N]) noexcept {  // NOLINT: implicit on purpose
    for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
  }
  /// Returns the text without its terminating null.
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {data, N - 1}; }
};

namespace detail {

template <class B>
constexpr std::string_view static_id() noexcept {
  return std::string_view{B::id};
}

// Orders backends as registered_backends() does: by rank, then by id.
template <class A, class B>
constexpr bool rank_before() noexcept {
  if (static_cast<int>(A::rank) != static_cast<int>(B::rank))
    return static_cast<int>(A::rank) < static_cast<int>(B::rank);
  return static_id<A>() < static_id<B>();
}

// Each check is its own template, so the compiler's "required from" note
// names the offending type next to the message.
template <class B>
struct static_backend_check {
  static_assert(backend<B>,
                "roster::static_registry: a listed type does not model roster::backend (the type is named in "
                "the 'required from' note). It needs static id, rank, dispatches, ops, a device_type derived "
                "from roster::device, open(roster::open_key, std::uint32_t) -> expected<unique_ptr<device_type>> and "
                "enumerate() -> expected<vector<adapter_info>>; see roster/backend.hpp. Fix: add the missing "
                "members, or remove the type from the registry.");
  static constexpr bool value = backend<B>;
};

template <class B, bool modelled = backend<B>>
struct static_final_check {
  static constexpr bool value = true;  // already reported by static_backend_check
};
template <class B>
struct static_final_check<B, true> {
  static_assert(std::is_final_v<typename B::device_type>,
                "roster::static_registry: a backend's device_type is not final (the backend is named in the "
                "'required from' note), so calls through it stay virtual. Fix: declare the device class "
                "`final`.");
  static constexpr bool value = std::is_final_v<typename B::device_type>;
};

template <class... Bs>
constexpr std::size_t first_duplicate_id() noexcept {
  constexpr std::size_t n = sizeof...(Bs);
  if constexpr (n < 2) {
    return n;
  } else {
    constexpr std::array<std::string_view, n> ids{static_id<Bs>()...};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (ids[i] == ids[j]) return i;
    return n;
  }
}

template <std::size_t N>
constexpr fixed_string<N + 1> to_fixed(std::string_view s) noexcept {
  char buf[N + 1]{};
  for (std::size_t i = 0; i < N; ++i) buf[i] = s[i];
  return fixed_string<N + 1>(buf);
}

// Instantiated only when two ids collide, so the note shows the id:
// "required from struct duplicate_backend_id<fixed_string<4>{"cpu"}>".
template <fixed_string id>
struct duplicate_backend_id {
  static_assert(id.view().size() == std::size_t(-1),
                "roster::static_registry: two backends share one id (the id is the argument of "
                "duplicate_backend_id in the note). Fix: give each backend a unique "
                "`static constexpr std::string_view id`, or list the backend once.");
  static constexpr bool value = false;
};

template <class... Bs>
struct static_id_check {
  static constexpr std::size_t dup = first_duplicate_id<Bs...>();
  static constexpr bool check() noexcept {
    if constexpr (dup == sizeof...(Bs)) {
      return true;
    } else {
      constexpr std::array<std::string_view, sizeof...(Bs)> ids{static_id<Bs>()...};
      return duplicate_backend_id<to_fixed<ids[dup].size()>(ids[dup])>::value;
    }
  }
  static constexpr bool value = check();
};

template <class... Bs>
constexpr auto sort_by_rank() {
  namespace hana = boost::hana;
  return hana::sort(hana::tuple_t<Bs...>, [](auto a, auto b) {
    return hana::bool_c<rank_before<typename decltype(a)::type, typename decltype(b)::type>()>;
  });
}

template <class S>
inline constexpr bool is_hana_string_v = false;
template <char... c>
inline constexpr bool is_hana_string_v<boost::hana::string<c...>> = true;

// Friend of roster::device (one line in backend.hpp): reaches the protected
// liveness check. Where D's override is reachable from here (D declares
// `friend struct roster::detail::static_access;`) the call names the final
// type and is direct; otherwise it goes through roster::device, which Clang
// still devirtualizes and GCC 12 does not.
struct static_access {
  template <class D>
  static bool owns(const D& d, const buffer& b) noexcept {
    if constexpr (requires { d.owns(b); })
      return d.owns(b);
    else
      return static_cast<const device&>(d).owns(b);
  }
};

template <class D>
struct is_grid_sync_split : std::false_type {};
template <class Inner>
struct is_grid_sync_split<grid_sync_split<Inner>> : std::true_type {};

}  // namespace detail

/// A device type that static dispatch can call without a virtual call: a
/// final class derived from roster::device.
template <class D>
concept static_device = std::derived_from<D, device> && std::is_final_v<D>;

/// A closed, compile-time list of backend types, sorted by (rank, id).
///
/// Checked when the type is named: every type models roster::backend, its
/// device_type is final, and ids are unique. `backends` holds hana::type_c<B>
/// in rank order; `find`, `get` and `for_each` work on it at compile time.
template <class... Backends>
class static_registry {
  static constexpr bool modelled_ = (detail::static_backend_check<Backends>::value && ...);
  static constexpr bool final_ = (detail::static_final_check<Backends>::value && ...);
  static constexpr bool valid_ = modelled_ && final_ && detail::static_id_check<Backends...>::value;

  static constexpr auto sorted() {
    if constexpr (valid_)
      return detail::sort_by_rank<Backends...>();
    else
      return boost::hana::tuple_t<>;
  }

 public:
  /// The backend types, as hana::type_c<B>, in (rank, id) order.
  static constexpr auto backends = sorted();
  /// Number of backends.
  static constexpr std::size_t size = sizeof...(Backends);

  /// Returns the ids in (rank, id) order.
  [[nodiscard]] static constexpr auto ids() noexcept {
    return boost::hana::unpack(backends, [](auto... t) {
      return std::array<std::string_view, sizeof...(t)>{detail::static_id<typename decltype(t)::type>()...};
    });
  }
  /// Returns the ranks in (rank, id) order.
  [[nodiscard]] static constexpr auto ranks() noexcept {
    return boost::hana::unpack(backends, [](auto... t) {
      return std::array<int, sizeof...(t)>{static_cast<int>(decltype(t)::type::rank)...};
    });
  }
  /// Returns the position of the backend with this id in rank order, or size.
  [[nodiscard]] static constexpr std::size_t index_of(std::string_view id) noexcept {
    constexpr auto all = ids();
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i] == id) return i;
    return size;
  }

  /// Returns hana::just(hana::type_c<B>) for the backend whose id is the
  /// compile-time string s (BOOST_HANA_STRING("cpu")), or hana::nothing.
  template <class S>
  [[nodiscard]] static constexpr auto find(S) noexcept {
    static_assert(detail::is_hana_string_v<S>,
                  "roster::static_registry::find: the id must be a compile-time string. Fix: write "
                  "find(BOOST_HANA_STRING(\"cpu\")), or use get<\"cpu\">().");
    constexpr std::size_t i = index_of(std::string_view{S::c_str()});
    if constexpr (i < size)
      return boost::hana::just(boost::hana::at_c<i>(backends));
    else
      return boost::hana::nothing;
  }
  /// Returns whether a backend with the compile-time id s is listed.
  template <class S>
  [[nodiscard]] static constexpr auto contains(S s) noexcept {
    return boost::hana::bool_c<!decltype(boost::hana::is_nothing(find(s)))::value>;
  }

  /// Returns hana::type_c<B> for the backend with this id; a missing id does not compile.
  template <fixed_string id>
  [[nodiscard]] static constexpr auto get() noexcept {
    constexpr std::size_t i = index_of(id.view());
    static_assert(i < size,
                  "roster::static_registry::get<id>: no backend in this registry has that id. Fix: list the "
                  "backend type in static_registry<...>, or check the id's spelling (ids are case-sensitive).");
    if constexpr (i < size)
      return boost::hana::at_c<i>(backends);
    else
      return boost::hana::type_c<void>;
  }
  /// Returns hana::type_c<B> for the backend with the compile-time id s.
  template <class S>
  [[nodiscard]] static constexpr auto get(S s) noexcept {
    constexpr auto found = find(s);
    static_assert(!decltype(boost::hana::is_nothing(found))::value,
                  "roster::static_registry::get(id): no backend in this registry has that id. Fix: list the "
                  "backend type in static_registry<...>, or check the id's spelling (ids are case-sensitive).");
    if constexpr (!decltype(boost::hana::is_nothing(found))::value)
      return *found;
    else
      return boost::hana::type_c<void>;
  }

  /// Calls f(hana::type_c<B>) for each backend, in (rank, id) order.
  template <class F>
  static constexpr void for_each(F&& f) {
    boost::hana::for_each(backends, std::forward<F>(f));
  }

  /// Opens adapter `ordinal` of the backend with this id, as its concrete
  /// device type, through the one open path (roster::acquire's checks; a
  /// throwing factory becomes an error). No wrapper: dispatch_static splits
  /// a program at its grid_syncs where the device has no native grid sync.
  template <fixed_string id>
  [[nodiscard]] static auto open(std::uint32_t ordinal = 0) noexcept {
    using B = typename decltype(get<id>())::type;
    return open_backend<B>(ordinal);
  }
  /// Opens adapter `ordinal` of the backend with the compile-time id s.
  template <class S>
  [[nodiscard]] static auto open(S s, std::uint32_t ordinal = 0) noexcept {
    using B = typename decltype(get(s))::type;
    return open_backend<B>(ordinal);
  }

  /// Checks that the link-time inventory lists every backend of this
  /// registry with the same rank and capability.
  [[nodiscard]] static expected<void> check_inventory() {
    std::string missing;
    std::string differ;
    const auto registered = registered_backends();
    for_each([&](auto t) {
      using B = typename decltype(t)::type;
      const auto id = detail::static_id<B>();
      const backend_entry* hit = nullptr;
      for (const auto& e : registered)
        if (e.id() == id) hit = &e;
      if (hit == nullptr) {
        missing += (missing.empty() ? "" : ", ") + std::string(id);
      } else if (hit->rank != static_cast<int>(B::rank) || hit->dispatches != static_cast<bool>(B::dispatches) ||
                 hit->registration->ops != op_set(B::ops)) {
        differ += (differ.empty() ? "" : ", ") + std::string(id);
      }
    });
    if (!missing.empty())
      return make_error(errc::not_found,
                        "static registry: the link-time inventory does not list " + missing,
                        "register each backend with ROSTER_REGISTER_STATIC_BACKEND(B) in one .cpp of the "
                        "program, or link its library with link_whole");
    if (!differ.empty())
      return make_error(errc::conflict,
                        "static registry: the link-time inventory lists " + differ +
                            " with another rank, capability or op set than its type",
                        "register the backend once, with ROSTER_REGISTER_STATIC_BACKEND(B), so both views "
                        "read the same type");
    return {};
  }

 private:
  template <class B>
  static expected<std::unique_ptr<typename B::device_type>> open_backend(std::uint32_t ordinal) noexcept {
    return open_as<B>(ordinal);
  }
};

/// Validates and runs a program on a device of a known final type, with no
/// virtual call: the same checks as device::dispatch. A device without native
/// grid sync gets the pieces between grid_syncs in order, as the grid-sync
/// split does.
template <static_device D>
[[nodiscard]] expected<void> dispatch_static(D& d, const program& p) {
  if (auto ok = validate(p); !ok) return std::move(ok).error().prepend(d.adapter().spec());
  const device_caps c = d.caps();
  for (const auto& s : p.steps()) {
    if (!c.ops.contains(s.op))
      return make_error(errc::unsupported,
                        d.adapter().spec() + ": dispatch: this device does not run " + std::string(to_string(s.op)),
                        "route the program with roster::acquire_preferred(program), or remove the step");
    const buffer* bufs[3] = {&s.out, &s.in1, &s.in2};
    for (int b = 0; b < buffers_of(s.op); ++b) {
      const buffer& x = *bufs[b];
      if (x.owner != d.id())
        return make_error(errc::invalid_argument,
                          d.adapter().spec() + ": dispatch: the buffer belongs to " +
                              (x.owner == 0 ? std::string("no device") : std::string("another device")),
                          "use a buffer allocated on this device with allocate<T>(n)");
      if (!detail::static_access::owns(d, x))
        return make_error(errc::invalid_argument,
                          d.adapter().spec() + ": dispatch: the " + std::string(to_string(x.type)) +
                              " buffer of " + std::to_string(x.size) +
                              " elements is not live on this device (released, or its handle was altered)",
                          "allocate a new buffer; a released buffer's handle cannot be reused");
    }
  }
  if (p.type() == element_type::f64 && !c.f64)
    return make_error(errc::unsupported, d.adapter().spec() + ": dispatch: this device has no double support",
                      "use float buffers on this device");
  if constexpr (detail::is_grid_sync_split<D>::value) {
    // The split's inner device is final too: skip the split when there is
    // nothing to cut, and call the inner device directly.
    if (!p.ops().contains(op::grid_sync)) return d.inner().dispatch_steps(p.steps());
  } else {
    if (!c.native_grid_sync && p.ops().contains(op::grid_sync)) {
      for (auto piece : split_at_grid_sync(p.steps()))
        if (auto ok = d.dispatch_steps(piece); !ok) return ok;
      return {};
    }
  }
  return d.dispatch_steps(p.steps());
}

/// Wraps a device of final type D in the grid-sync split; the split's calls
/// to D are direct, and the result is itself a static_device.
template <static_device D>
[[nodiscard]] std::unique_ptr<grid_sync_split<D>> split_static(std::unique_ptr<D> d) {
  return std::make_unique<grid_sync_split<D>>(std::move(d));
}

}  // namespace roster

/// Registers backend type B in both views: checks the static registry's
/// contract (roster::backend, final device_type) and submits B to the
/// link-time inventory, so static_registry<..., B, ...> and
/// registered_backends() list it with one rank and one id. Use once per
/// program, at namespace scope in a .cpp.
#define ROSTER_REGISTER_STATIC_BACKEND(B)                                        \
  static_assert(::roster::detail::static_backend_check<B>::value &&             \
                    ::roster::detail::static_final_check<B>::value,             \
                "ROSTER_REGISTER_STATIC_BACKEND(" #B "): see the message above"); \
  ROSTER_REGISTER_BACKEND(B)
