#pragma once
// Private: the one open path and its wrappers.

#include <roster/acquire.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/backend/backend_id.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/base/guard.hpp>
#include <roster/detail/open/requirement.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <memory>
#include <string>

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
  const tuning_record* record = nullptr;
  if (!options.tuning.empty()) {
    record = detail::find_tuning_traced(options.tuning, d->adapter()).record;
    if (record != nullptr) d->use_kernel_choices(record->kernels);
  }
  if (!d->caps().native_grid_sync || options.force_split) {
    d = std::make_unique<grid_sync_split<device>>(std::move(d));
  } else if (auto shapes = split_shapes(record, d->adapter()); !shapes.empty()) {
    // Per program shape: only the shapes the record measured faster cut.
    d = std::make_unique<grid_sync_split<device>>(std::move(d), std::move(shapes));
  }
  return d;
}

namespace detail {

// Refuses an adapter a vendor mask hides (CUDA_VISIBLE_DEVICES and its kin
// are the scheduler's word, for every API). Costs nothing when no mask is set.
inline expected<void> check_masks(const backend_registration& backend, const device_spec& spec) {
  if (!vendor_masks::any_set([](const char* name) { return env_text(name).has_value(); })) return {};
  auto listed = enumerate_adapters(backend);
  if (!listed) return {};  // the factory reports what is wrong with the backend
  const adapter_info* mine = nullptr;
  for (auto& a : *listed) {
    if (a.backend.empty()) a.backend = spec.backend;
    if (a.ordinal == spec.ordinal) mine = &a;
  }
  if (mine == nullptr) return {};  // the factory reports the missing ordinal
  const auto masks = vendor_masks::resolve(
      [](const char* name) -> const char* {
        auto v = env_text(name);
        return v ? v->data() : nullptr;
      },
      *listed, &machine_gpus);
  if (auto verdict = masks.judge(*mine); verdict && !verdict->kept)
    return make_error(errc::unavailable, "device spec '" + spec.str() + "': hidden: " + verdict->reason,
                      "open a device the job was given, or change the mask if the job should see this one; "
                      "roster-info lists the visible adapters");
  return {};
}

}  // namespace detail

ROSTER_INLINE expected<const backend_registration*> detail::backend_for(const device_spec& spec) {
  const backend_registration* backend = find_backend(spec.backend);
  if (backend == nullptr)
    return make_error(errc::not_found,
                      "device spec '" + spec.str() + "': unknown type '" + spec.backend +
                          "'; known types: " + known_backends(),
                      keep_backend_fix(spec.backend));
  // Two backends claiming this id: whichever the linker listed first would
  // open, silently; refuse and name both.
  if (auto conflict = backend_conflict(spec.backend))
    return std::move(*conflict).prepend("device spec '" + spec.str() + "'");
  return backend;
}

ROSTER_INLINE expected<std::unique_ptr<device>> detail::open(const backend_registration& backend,
                                                             const device_spec& spec,
                                                             const acquire_options& options) noexcept {
  return guarded(spec.str(), backend.id, "open", [&]() -> expected<std::unique_ptr<device>> {
    backends_in_use pin;  // from the lookup to the factory's return
    auto req = requirement_from_env();
    if (!req) return std::move(req).error();
    if (auto ok = check_masks(backend, spec); !ok) return std::move(ok).error();
    auto d = open_registered(backend, spec.ordinal);
    if (!d) return std::move(d).error();
    // Strict mode: a device that falls short of ROSTER_REQUIRE is an error, not a fallback.
    if (*req)
      if (auto why = (*req)->shortfall((*d)->adapter()); !why.empty())
        return make_error(errc::unavailable, "device spec '" + spec.str() + "': " + why + " (strict mode)",
                          "name a device that satisfies ROSTER_REQUIRE, relax it, or unset it to allow this device");
    return apply_wrappers(std::move(*d), options);
  });
}

ROSTER_INLINE expected<std::unique_ptr<device>> acquire(std::string_view text, const acquire_options& options) {
  auto spec = parse_spec(text);
  if (!spec) return std::move(spec).error();
  backends_in_use pin;
  auto backend = detail::backend_for(*spec);
  if (!backend) return std::move(backend).error();
  return detail::open(**backend, *spec, options);
}

}  // namespace roster
