#pragma once
// Private: kernel lookup and the check of a call against its signature.

#include <roster/kernels.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

namespace roster {

namespace detail {
inline std::string describe_param(const kernel_param& p) {
  if (!p.is_buffer) return std::string(to_string(p.scalar)) + " scalar";
  return std::string(to_string(p.mode)) + " " + std::string(to_string(p.type)) + " buffer";
}
inline std::string describe_signature(std::span<const kernel_param> sig) {
  std::string out = "(";
  for (std::size_t i = 0; i < sig.size(); ++i) out += (i ? ", " : "") + describe_param(sig[i]);
  return out + ")";
}
inline std::string call_where(const kernel_call& c) { return "call of '" + c.op + "'"; }
inline bool is_float(scalar_type t) noexcept { return t == scalar_type::f32 || t == scalar_type::f64; }
}  // namespace detail

ROSTER_INLINE std::span<const kernel_entry* const> kernels_of(std::string_view op) noexcept {
  auto all = inventory<kernel_entry>();  // sorted by key: op first
  auto lo = std::lower_bound(all.begin(), all.end(), op,
                             [](const kernel_entry* e, std::string_view o) { return e->op < o; });
  auto hi = std::upper_bound(lo, all.end(), op,
                             [](std::string_view o, const kernel_entry* e) { return o < e->op; });
  return {lo, hi};
}

ROSTER_INLINE std::string kernel_backends(std::string_view op, element_type type) {
  std::string out;
  std::string_view last;
  for (const auto* e : kernels_of(op)) {
    if (e->type != type || e->backend == last) continue;
    // Sorted by (op, backend, type, variant): one backend's entries are adjacent.
    if (out.find(std::string(e->backend)) != std::string::npos) continue;
    out += (out.empty() ? "" : ", ") + std::string(e->backend);
    last = e->backend;
  }
  return out;
}

ROSTER_INLINE expected<const kernel_entry*> find_kernel(std::string_view op, std::string_view backend,
                                                        element_type type, std::string_view variant) {
  // The hit path builds no string: a dispatch looks its calls up every time.
  const kernel_entry* only = nullptr;
  const kernel_entry* dflt = nullptr;
  std::size_t count = 0;
  const auto entries = kernels_of(op);
  for (const auto* e : entries) {
    if (e->backend != backend || e->type != type) continue;
    if (!variant.empty() && e->variant == variant) return e;
    ++count;
    only = e;
    if (e->is_default && dflt == nullptr) dflt = e;
  }
  if (variant.empty() && dflt != nullptr) return dflt;
  if (variant.empty() && count == 1) return only;
  std::string names;
  for (const auto* e : entries)
    if (e->backend == backend && e->type == type) names += (names.empty() ? "'" : ", '") + std::string(e->variant) + "'";
  const std::string what = "op '" + std::string(op) + "' over " + std::string(to_string(type)) + " on backend '" +
                           std::string(backend) + "'";
  if (count == 0) {
    const std::string others = kernel_backends(op, type);
    return make_error(errc::unsupported, "no kernel for " + what,
                      others.empty()
                          ? "register a " + std::string(backend) + " kernel for '" + std::string(op) +
                                "' over " + std::string(to_string(type)) + " with ROSTER_KERNEL"
                          : "run the program on a backend that has it (" + others +
                                ") with roster::acquire_preferred(program), or register a " + std::string(backend) +
                                " kernel for '" + std::string(op) + "' with ROSTER_KERNEL");
  }
  if (!variant.empty())
    return make_error(errc::not_found, "no variant '" + std::string(variant) + "' of " + what,
                      "name one of the registered variants (" + names + "), or leave the variant empty");
  return make_error(errc::invalid_argument,
                    what + " has " + std::to_string(count) + " variants (" + names + ") and none is the default",
                    "register one of them with roster::default_variant, or name a variant in the call");
}

ROSTER_INLINE std::span<const kernel_param> signature_for(std::string_view op, element_type type) noexcept {
  for (const auto* e : kernels_of(op))
    if (e->type == type) return e->signature;
  // A built-in op is known even where no backend that registers it is linked.
  const roster::op o = builtin_op(op);
  if (o == roster::op::call) return {};
  return type == element_type::f32 ? builtin_signature<float>(o) : builtin_signature<double>(o);
}

ROSTER_INLINE expected<std::size_t> check_call(const kernel_call& c) {
  const auto entries = kernels_of(c.op);
  const bool is_builtin = builtin_op(c.op) != op::call;
  if (entries.empty() && !is_builtin)
    return make_error(errc::not_found, detail::call_where(c) + ": no kernel is registered for this op",
                      "register a kernel for '" + c.op +
                          "' with ROSTER_KERNEL or ROSTER_CPU_KERNEL and link the object that registers it, or "
                          "correct the op's name");
  if (c.buffers.empty())
    return make_error(errc::invalid_argument, detail::call_where(c) + ": the call passes no buffer",
                      "pass the buffers in the order of the signature " +
                          detail::describe_signature(signature_for(c.op, element_type::f64)));
  const element_type type = c.buffers.front().type;
  std::span<const kernel_param> sig;  // signature_for's answer, from the entries already found
  for (const auto* e : entries)
    if (e->type == type) {
      sig = e->signature;
      break;
    }
  if (sig.empty() && is_builtin)
    sig = type == element_type::f32 ? builtin_signature<float>(builtin_op(c.op)) : builtin_signature<double>(builtin_op(c.op));
  if (sig.empty()) {
    std::string types;
    for (const auto* e : entries) {
      const std::string t(to_string(e->type));
      if (types.find(t) == std::string::npos) types += (types.empty() ? "" : " or ") + t;
    }
    return make_error(errc::invalid_argument,
                      detail::call_where(c) + ": parameter 0 is a " + std::string(to_string(type)) +
                          " buffer, but the op is registered for " + types + " only",
                      "pass " + types + " buffers, or register a " + std::string(to_string(type)) + " kernel for '" +
                          c.op + "'");
  }
  return check_arguments(c.op, sig, c.buffers, c.scalars, c.extent);
}

ROSTER_INLINE expected<std::size_t> check_arguments(std::string_view op, std::span<const kernel_param> sig,
                                                    std::span<const buffer> buffers,
                                                    std::span<const scalar_arg> scalars, std::size_t call_extent) {
  // Built only on an error: the check runs at every dispatch.
  auto where = [&] { return "call of '" + std::string(op) + "'"; };
  std::size_t nb = 0, ns = 0;
  for (const auto& p : sig) (p.is_buffer ? nb : ns) += 1;
  if (buffers.size() != nb || scalars.size() != ns || sig.empty())
    return make_error(errc::invalid_argument,
                      where() + ": " + std::to_string(buffers.size()) + " buffers and " +
                          std::to_string(scalars.size()) + " scalars passed, the signature " +
                          detail::describe_signature(sig) + " takes " + std::to_string(nb) + " and " +
                          std::to_string(ns),
                      "pass exactly the signature's buffers, then its scalars, in order");
  std::size_t bi = 0, si = 0, extent = 0;
  std::size_t extent_param = sig.size();
  for (std::size_t i = 0; i < sig.size(); ++i) {
    const kernel_param& p = sig[i];
    // Built only on an error: the check runs at every dispatch.
    auto where_ = [&] {
      return where() + ": parameter " + std::to_string(i) + " (" + detail::describe_param(p) + ")";
    };
    if (p.is_buffer) {
      const buffer& b = buffers[bi++];
      if (b.owner == 0)
        return make_error(errc::invalid_argument, where_() + ": the buffer was never allocated",
                          "allocate every buffer with device.allocate<T>(n) before naming it in a program");
      if (b.owner != buffers.front().owner)
        return make_error(errc::invalid_argument, where_() + ": the buffers come from different devices",
                          "allocate every buffer of a program on the device that dispatches it");
      if (b.type != p.type)
        return make_error(errc::invalid_argument,
                          where_() + ": a " + std::string(to_string(b.type)) + " buffer was passed",
                          "pass a " + std::string(to_string(p.type)) + " buffer in this place");
      if (p.length != length::extent) {
        if (b.size == 0)
          return make_error(errc::invalid_argument, where_() + ": the buffer is empty",
                            "allocate it with at least one element");
        continue;
      }
      if (extent_param == sig.size()) {
        extent_param = i;
        extent = b.size;
      } else if (b.size != extent) {
        return make_error(errc::invalid_argument,
                          where_() + ": its length " + std::to_string(b.size) + " disagrees with parameter " +
                              std::to_string(extent_param) + "'s " + std::to_string(extent),
                          "give every buffer the signature sizes by the extent the same number of elements");
      }
    } else {
      const scalar_arg& a = scalars[si++];
      if (detail::is_float(a.type) != detail::is_float(p.scalar))
        return make_error(errc::invalid_argument,
                          where_() + ": a " + std::string(to_string(a.type)) + " was passed",
                          "pass a " + std::string(to_string(p.scalar)) + " value in this place, e.g. " +
                              (detail::is_float(p.scalar) ? "2.0" : "std::int32_t{2}"));
      if (detail::is_float(a.type)) {
        const double v = a.as<double>();
        if (!std::isfinite(v))
          return make_error(errc::invalid_argument, where_() + ": the value is not finite",
                            "pass a finite scalar (not NaN or infinity)");
        if (p.scalar == scalar_type::f32 && std::fabs(v) > 3.4028234663852886e38)
          return make_error(errc::invalid_argument, where_() + ": the value does not fit in a float",
                            "pass a value within the float range");
      } else {
        const long long v = a.type == scalar_type::i32 ? a.i32 : static_cast<long long>(a.u32);
        const bool fits = p.scalar == scalar_type::i32 ? v <= std::numeric_limits<std::int32_t>::max() : v >= 0;
        if (!fits)
          return make_error(errc::invalid_argument, where_() + ": " + std::to_string(v) + " does not fit",
                            "pass a value within the " + std::string(to_string(p.scalar)) + " range");
      }
    }
  }
  if (call_extent != 0) {
    if (extent_param != sig.size() && call_extent > extent)
      return make_error(errc::invalid_argument,
                        where() + ": the extent " + std::to_string(call_extent) +
                            " is beyond parameter " + std::to_string(extent_param) + "'s length " +
                            std::to_string(extent),
                        "give an extent of at most the buffers' length, or leave it 0 to use their length");
    extent = call_extent;
  } else if (extent_param == sig.size()) {
    return make_error(errc::invalid_argument,
                      where() + ": the signature sizes no buffer by the extent, and the call gives none",
                      "give the index space with call_options{.extent = n}");
  }
  if (extent == 0)
    return make_error(errc::invalid_argument, where() + ": the index space is empty",
                      "pass buffers of at least one element, or an extent of at least 1");
  return extent;
}

ROSTER_INLINE void convert_scalars(const kernel_entry& entry, const kernel_call& c,
                                   std::span<scalar_arg> out) noexcept {
  std::size_t si = 0;
  for (const auto& p : entry.signature) {
    if (p.is_buffer) continue;
    if (si >= out.size() || si >= c.scalars.size()) return;
    const scalar_arg& a = c.scalars[si];
    void* at = &out[si];  // call_arguments' room: each scalar is made here, never assigned over
    switch (p.scalar) {
      case scalar_type::f32: ::new (at) scalar_arg(a.as<float>()); break;
      case scalar_type::f64: ::new (at) scalar_arg(a.as<double>()); break;
      case scalar_type::i32: ::new (at) scalar_arg(a.as<std::int32_t>()); break;
      case scalar_type::u32: ::new (at) scalar_arg(a.as<std::uint32_t>()); break;
    }
    ++si;
  }
  for (; si < out.size(); ++si) ::new (static_cast<void*>(&out[si])) scalar_arg();  // none left unmade
}

namespace detail {
inline std::string step_where(std::size_t i, const step& s) {
  return "program step " + std::to_string(i) + " (" + std::string(to_string(s.op)) + ")";
}

// The signature of each built-in op over float and double as signature_for
// finds it in the kernel inventory, looked up once per inventory snapshot:
// validating a built-in step costs an index, not a search. A snapshot is
// replaced only when a module is loaded or unloaded; the tables built from
// older ones stay reachable from the newest (never freed, like snapshots).
struct builtin_signature_table {
  const kernel_entry* const* from = nullptr;
  const builtin_signature_table* older = nullptr;
  std::span<const kernel_param> sig[op_count][2];
};
inline const builtin_signature_table& builtin_signatures_now() {
  static constinit std::atomic<const builtin_signature_table*> current{nullptr};
  const auto all = inventory<kernel_entry>();
  const builtin_signature_table* table = current.load(std::memory_order_acquire);
  if (table == nullptr || table->from != all.data()) [[unlikely]] {
    auto* fresh = new builtin_signature_table{all.data(), table, {}};
    for (std::size_t k = 0; k < op_count; ++k) {
      fresh->sig[k][0] = signature_for(to_string(static_cast<op>(k)), element_type::f32);
      fresh->sig[k][1] = signature_for(to_string(static_cast<op>(k)), element_type::f64);
    }
    // A thread that lost the race keeps its table reachable through `older`.
    while (!current.compare_exchange_weak(table, fresh, std::memory_order_acq_rel)) fresh->older = table;
    table = fresh;
  }
  return *table;
}
}  // namespace detail

ROSTER_INLINE expected<void> validate(std::span<const step> steps) {
  if (steps.empty())
    return make_error(errc::invalid_argument, "program: the program has no steps",
                      "add at least one step, e.g. p.fill(a, 1.0), before dispatching");
  if (steps.size() > max_program_steps)
    return make_error(errc::invalid_argument,
                      "program: " + std::to_string(steps.size()) + " steps is more than the limit of " +
                          std::to_string(max_program_steps),
                      "split the work into several programs of at most " +
                          std::to_string(max_program_steps) + " steps");
  bool have_type = false, any_buffer = false;
  element_type type = element_type::f64;
  const detail::builtin_signature_table* signatures = nullptr;  // fetched at the first built-in step
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const step& s = steps[i];
    if (s.op == op::call) {
      if (s.call == nullptr)
        return make_error(errc::invalid_argument, "program step " + std::to_string(i) + ": a call step without its call",
                          "append calls with program::call, not with push");
      if (auto ok = check_call(*s.call); !ok)
        return std::move(ok).error().prepend("program step " + std::to_string(i));
      any_buffer = true;
      continue;
    }
    if (static_cast<std::size_t>(s.op) >= op_count)
      return make_error(errc::invalid_argument,
                        "program step " + std::to_string(i) + ": unknown op code " +
                            std::to_string(static_cast<int>(s.op)),
                        "build steps with the program member functions (fill, copy, mul, add, triad, "
                        "nstream, dot, grid_sync)");
    const int nb = buffers_of(s.op);
    if (nb == 0) continue;
    any_buffer = true;
    // The step's arguments against its op's signature from the kernel
    // inventory: the check (and the errors) of a user kernel's call.
    const buffer bufs[3] = {s.out, s.in1, s.in2};
    const scalar_arg scalar(s.scalar);
    const bool has_scalar = s.op == op::fill || s.op == op::mul || s.op == op::triad || s.op == op::nstream;
    if (signatures == nullptr) signatures = &detail::builtin_signatures_now();
    const auto sig = signatures->sig[static_cast<std::size_t>(s.op)][s.out.type == element_type::f32 ? 0 : 1];
    if (auto ok = check_arguments(to_string(s.op), sig, std::span<const buffer>(bufs, static_cast<std::size_t>(nb)),
                                  std::span<const scalar_arg>(&scalar, has_scalar ? 1 : 0));
        !ok)
      return std::move(ok).error().prepend("program step " + std::to_string(i));
    if (!have_type) {
      type = s.out.type;
      have_type = true;
    } else if (s.out.type != type) {
      return make_error(errc::invalid_argument, detail::step_where(i, s) + ": mixes float and double buffers",
                        "use buffers of one element type in the whole program");
    }
  }
  if (!any_buffer)
    return make_error(errc::invalid_argument, "program: the program holds only grid_sync steps",
                      "add at least one step that works on a buffer");
  return {};
}

ROSTER_INLINE expected<void> validate(const program& p) {
  const void* token = &detail::builtin_signatures_now();  // a new one whenever the inventory changes
  const std::size_t n = p.steps().size();
  if (n != 0 && p.validated_.steps.load(std::memory_order_acquire) == n &&
      p.validated_.token.load(std::memory_order_acquire) == token)
    return {};
  auto ok = validate(p.steps());
  if (ok) {
    p.validated_.token.store(token, std::memory_order_release);
    p.validated_.steps.store(n, std::memory_order_release);
  }
  return ok;
}

ROSTER_INLINE kernel_buffer* call_arguments::more_buffers(std::size_t n) {
  more_buffers_.resize(n);
  return more_buffers_.data();
}

ROSTER_INLINE scalar_arg* call_arguments::more_scalars(std::size_t n) {
  more_scalars_.resize(n);
  return more_scalars_.data();
}

ROSTER_INLINE error call_arguments::buffer_not_live(std::size_t index) {
  return error(errc::invalid_argument,
               "call: buffer " + std::to_string(index) +
                   " is not live on this device (another device's, released, or altered)",
               "pass buffers allocated on this device with allocate<T>(n), and dispatch through "
               "device::dispatch(program), which checks every buffer");
}

ROSTER_INLINE expected<void> check_kernels() {
  auto info = inventory_info<kernel_entry>();
  if (info.conflicts != 0)
    return make_error(errc::conflict,
                      std::string("kernel inventory: two kernels share one op, backend, type and variant (") +
                          info.kept_site + " and " + info.dropped_site + "); the one at " + info.kept_site +
                          " is kept",
                      "give each variant of one op, backend and type its own name");
  auto all = inventory<kernel_entry>();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const kernel_entry& a = *all[i];
    for (std::size_t j = i + 1; j < all.size() && all[j]->op == a.op; ++j) {
      const kernel_entry& b = *all[j];
      if (b.type != a.type) continue;
      const std::string what = "kernel '" + std::string(a.op) + "' over " + std::string(to_string(a.type));
      if (!std::equal(a.signature.begin(), a.signature.end(), b.signature.begin(), b.signature.end(),
                      [](const kernel_param& x, const kernel_param& y) {
                        return x.is_buffer == y.is_buffer && x.mode == y.mode && x.type == y.type &&
                               x.length == y.length && x.scalar == y.scalar;
                      }))
        return make_error(errc::conflict,
                          what + ": variant '" + std::string(a.variant) + "' on " + std::string(a.backend) +
                              " takes " + detail::describe_signature(a.signature) + " but variant '" +
                              std::string(b.variant) + "' on " + std::string(b.backend) + " takes " +
                              detail::describe_signature(b.signature),
                          "register every variant of one op and type with one signature");
      if (a.is_default && b.is_default && a.backend == b.backend)
        return make_error(errc::conflict,
                          what + " on " + std::string(a.backend) + ": variants '" + std::string(a.variant) +
                              "' and '" + std::string(b.variant) + "' are both the default",
                          "register one default per op, backend and type; the others with roster::other_variant");
    }
  }
  return {};
}

}  // namespace roster
