#pragma once
// Private: the one open path and its wrappers.

#include <roster/acquire.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/backend/backend_id.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/open/plugin_device.hpp>
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

ROSTER_INLINE mask_view apply_vendor_masks(std::vector<adapter_info> adapters) {
  mask_view view;
  if (!detail::vendor_masks::any_set([](const char* name) { return detail::env_text(name).has_value(); })) {
    view.visible = std::move(adapters);
    return view;
  }
  const auto masks = detail::vendor_masks::resolve(
      [](const char* name) -> const char* {
        auto v = detail::env_text(name);
        return v ? v->data() : nullptr;
      },
      adapters, &detail::machine_gpus);
  view.notes = masks.notes();
  for (auto& a : adapters) {
    if (auto verdict = masks.judge(a); verdict && !verdict->kept)
      view.hidden.push_back({std::move(a), verdict->reason});
    else
      view.visible.push_back(std::move(a));
  }
  return view;
}

ROSTER_INLINE bool is_device_kind(std::string_view word) noexcept {
  for (auto kind : detail::requirement_kinds)
    if (detail::iequal(word, kind)) return true;
  return false;
}

ROSTER_INLINE expected<std::optional<std::string>> requirement_from_env() {
  auto req = detail::parsed_requirement_env();
  if (!req) return std::move(req).error();
  if (!*req) return std::optional<std::string>{};
  return std::optional<std::string>((*req)->text);
}

namespace detail {

// Refuses an adapter a vendor mask hides (CUDA_VISIBLE_DEVICES and its kin
// are the scheduler's word, for every API). Costs nothing when no mask is set.
inline expected<void> check_masks(const backend_registration& backend, const device_spec& spec) {
  if (!vendor_masks::any_set([](const char* name) { return env_text(name).has_value(); })) return {};
  auto listed = enumerate_adapters(backend);
  if (!listed) return {};  // the factory reports what is wrong with the backend
  for (auto& a : *listed)
    if (a.backend.empty()) a.backend = spec.backend;
  for (const auto& h : apply_vendor_masks(std::move(*listed)).hidden)
    if (h.adapter.ordinal == spec.ordinal)
      return make_error(errc::unavailable, "device spec '" + spec.str() + "': hidden: " + h.reason,
                        "open a device the job was given, or change the mask if the job should see this one; "
                        "roster-info lists the visible adapters");
  return {};  // visible, or missing: the factory reports the missing ordinal
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
    auto req = parsed_requirement_env();
    if (!req) return std::move(req).error();
    if (auto ok = check_masks(backend, spec); !ok) return std::move(ok).error();
    auto d = open_registered(backend, spec.ordinal);
    if (!d) return std::move(d).error();
    // A plugin's device is counted while it lives: meanwhile unload_plugin
    // refuses to unmap the code it runs.
    const void* code = backend.open != nullptr ? reinterpret_cast<const void*>(backend.open)
                                               : static_cast<const void*>(&backend);
    if (void* plugin = hold_plugin_of(code)) *d = std::make_unique<plugin_device>(std::move(*d), plugin);
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
