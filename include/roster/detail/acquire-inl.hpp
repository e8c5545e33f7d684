#pragma once
// Private: acquire, its wrappers and the router.

#include <roster/acquire.hpp>
#include <roster/detail/requirement.hpp>

namespace roster {

ROSTER_INLINE std::string known_backends() {
  backends_in_use pin;
  std::string out;
  for (const auto& b : registered_backends()) {
    if (!out.empty()) out += ", ";
    out += b.id();
  }
  return out.empty() ? std::string("none") : out;
}

ROSTER_INLINE std::unique_ptr<device> apply_wrappers(std::unique_ptr<device> d, const acquire_options& options) {
  if (d == nullptr || !options.wrap) return d;
  if (options.use_tuning) d->use_kernel_choices(kernel_choices_for(d->adapter()));
  if (!d->caps().native_grid_sync || options.force_split) {
    d = std::make_unique<grid_sync_split<device>>(std::move(d));
  } else if (options.use_tuning) {
    // Per program shape: only the shapes a record measured faster cut.
    if (auto shapes = split_shapes_for(d->adapter()); !shapes.empty())
      d = std::make_unique<grid_sync_split<device>>(std::move(d), std::move(shapes));
  }
  return d;
}

ROSTER_INLINE expected<std::unique_ptr<device>> acquire(std::string_view text, const acquire_options& options) {
  auto spec = parse_spec(text);
  if (!spec) return std::move(spec).error();
  backends_in_use pin;  // from the lookup to the factory's return
  const backend_registration* backend = find_backend(spec->backend);
  if (backend == nullptr)
    return make_error(errc::not_found,
                      "device spec '" + std::string(text) + "': unknown type '" + spec->backend +
                          "'; known types: " + known_backends(),
                      detail::keep_backend_fix(spec->backend));
  // Two backends claiming this id: whichever the linker listed first would
  // open, silently; refuse and name both.
  if (auto conflict = detail::backend_conflict(spec->backend))
    return std::move(*conflict).prepend("device spec '" + std::string(text) + "'");
  auto d = detail::open_adapter(*backend, spec->ordinal);
  if (!d) return std::move(d).error();
  // Strict mode: a device that falls short of ROSTER_REQUIRE is an error, not a fallback.
  auto req = detail::requirement_from_env();
  if (!req) return std::move(req).error();
  if (*req)
    if (auto why = (*req)->shortfall((*d)->adapter()); !why.empty())
      return make_error(errc::unavailable, "device spec '" + std::string(text) + "': " + why + " (strict mode)",
                        "name a device that satisfies ROSTER_REQUIRE, relax it, or unset it to allow this device");
  return apply_wrappers(std::move(*d), options);
}

namespace detail {
// Returns the ops a backend has no kernel for, as "'a', 'b'": the built-in
// ops of `needed` over `type` (a backend places their entries in the kernel
// inventory like any kernel) and the calls of the program. A backend
// registered at run time (register_factory) can place no inventory entry:
// its op set stands for its built-in ones.
inline std::string missing_kernels(op_set needed, element_type type, const program* p, std::string_view backend,
                                   const op_set* runtime_ops) {
  std::string missing;
  auto note = [&](std::string_view name) {
    const std::string quoted = "'" + std::string(name) + "'";
    if (missing.find(quoted) == std::string::npos) missing += (missing.empty() ? "" : ", ") + quoted;
  };
  if (runtime_ops == nullptr)
    for (std::size_t o = 0; o < op_count; ++o)
      if (needed.contains(static_cast<op>(o)) && !find_kernel(to_string(static_cast<op>(o)), backend, type))
        note(to_string(static_cast<op>(o)));
  if (p == nullptr) return missing;
  for (const auto& s : p->steps()) {
    if (s.op != op::call) continue;
    if (runtime_ops != nullptr && s.call->variant.empty() && builtin_op(s.call->op) != op::call) {
      if (!runtime_ops->contains(builtin_op(s.call->op))) note(s.call->op);
      continue;
    }
    if (!find_kernel(s.call->op, backend, s.call->buffers.front().type, s.call->variant)) note(s.call->op);
  }
  return missing;
}
inline bool registered_at_run_time(const backend_registration* r) noexcept {
  if (const auto* rt = runtime_backend_snapshot())
    for (const auto* e : rt->entries)
      if (&e->registration == r) return true;
  return false;
}
ROSTER_INLINE expected<routed_device> acquire_preferred_for(op_set needed, element_type type, const program* p);
}  // namespace detail

ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p) {
  if (auto ok = validate(p); !ok) return std::move(ok).error();
  return detail::acquire_preferred_for(p.ops(), p.type(), &p);
}

ROSTER_INLINE expected<routed_device> acquire_preferred(op_set needed, element_type type) {
  return detail::acquire_preferred_for(needed, type, nullptr);
}

ROSTER_INLINE expected<routed_device> detail::acquire_preferred_for(op_set needed, element_type type,
                                                                    const program* p) {
  routed_device out;
  backends_in_use pin;
  for (const auto& b : registered_backends()) {
    const std::string id(b.id());
    if (!b.dispatches) {
      out.passed.push_back({id, "emits code only; it does not dispatch on this host"});
      continue;
    }
    if (!b.registration->ops.contains(needed)) {
      std::string missing;
      for (std::size_t o = 0; o < op_count; ++o)
        if (needed.contains(static_cast<op>(o)) && !b.registration->ops.contains(static_cast<op>(o)))
          missing += (missing.empty() ? "" : ", ") + std::string(to_string(static_cast<op>(o)));
      out.passed.push_back({id, "does not support " + missing});
      continue;
    }
    if (auto missing = missing_kernels(needed, type, p, b.id(),
                                   registered_at_run_time(b.registration) ? &b.registration->ops : nullptr);
        !missing.empty()) {
      out.passed.push_back({id, "has no kernel for " + missing});
      continue;
    }
    auto d = acquire(id + ":0");
    if (!d) {
      out.passed.push_back({id, d.error().message()});
      continue;
    }
    if (type == element_type::f64 && !(*d)->caps().f64) {
      out.passed.push_back({id, "its device has no double support"});
      continue;
    }
    out.device = std::move(*d);
    out.backend = id;
    return out;
  }
  std::string why;
  for (const auto& x : out.passed) why += "\n  " + x.backend + ": " + x.reason;
  return make_error(errc::unavailable, "no backend can run this program" + (why.empty() ? std::string(" (none registered)") : why),
                    "link a backend that has a kernel entry for every op of the program (a backend registers its "
                    "built-in ops with ROSTER_BUILTIN_KERNELS, the CPU backend all eight; a user op needs "
                    "ROSTER_KERNEL for the backend), or relax the selector");
}

}  // namespace roster
