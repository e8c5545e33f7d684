#pragma once
// Private: the device front end and the backend lookups.

#include <roster/backend.hpp>
#include <roster/kernels.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/text.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>

namespace roster {

ROSTER_INLINE std::string adapter_info::uuid_string() const {
  if (!has_uuid()) return {};
  char out[48];
  const auto* u = uuid.data();
  std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return out;
}

namespace detail {
ROSTER_API ROSTER_INLINE std::uint64_t next_device_id() noexcept {
  static constinit std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
inline std::string describe(const buffer& b) {
  return std::string(to_string(b.type)) + " buffer of " + std::to_string(b.size) + " elements";
}
}  // namespace detail

namespace detail {
// Runs a backend's code, turning anything it throws into an error: nothing
// leaves roster's API as an exception.
template <class F>
auto guard_backend(const device& d, std::string_view what, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, d.adapter().spec() + ": " + std::string(what) + ": out of host memory",
                      "free memory or use smaller buffers");
  } catch (const std::exception& e) {
    return make_error(errc::internal,
                      d.adapter().spec() + ": " + std::string(what) + ": the backend threw: " + e.what(),
                      "fix the backend to return an error instead of throwing, or exclude it with "
                      "ROSTER_DEVICE_SELECTOR='!" + d.adapter().backend + ":*'");
  } catch (...) {
    return make_error(errc::internal,
                      d.adapter().spec() + ": " + std::string(what) + ": the backend threw a non-standard exception",
                      "fix the backend to return an error instead of throwing, or exclude it with "
                      "ROSTER_DEVICE_SELECTOR='!" + d.adapter().backend + ":*'");
  }
}
}  // namespace detail

ROSTER_INLINE device::device() : id_(detail::next_device_id()) {}

ROSTER_INLINE expected<void> device::check_buffer(const buffer& b, std::string_view what) const {
  if (b.owner != id_)
    return make_error(errc::invalid_argument,
                      std::string(adapter().spec()) + ": " + std::string(what) + ": the buffer belongs to " +
                          (b.owner == 0 ? std::string("no device") : std::string("another device")),
                      "use a buffer allocated on this device with allocate<T>(n)");
  if (!owns(b))
    return make_error(errc::invalid_argument,
                      std::string(adapter().spec()) + ": " + std::string(what) + ": the " + detail::describe(b) +
                          " is not live on this device (released, or its handle was altered)",
                      "allocate a new buffer; a released buffer's handle cannot be reused");
  return {};
}

ROSTER_INLINE expected<buffer> device::allocate(element_type t, std::size_t n) {
  if (t != element_type::f32 && t != element_type::f64)
    return make_error(errc::invalid_argument, adapter().spec() + ": allocate: unknown element type",
                      "allocate float or double buffers");
  if (t == element_type::f64 && !caps().f64)
    return make_error(errc::unsupported, adapter().spec() + ": allocate: this device has no double support",
                      "use float buffers on this device, or pick a device whose adapter reports f64");
  if (n == 0)
    return make_error(errc::invalid_argument, adapter().spec() + ": allocate: a buffer needs at least one element",
                      "allocate n >= 1 elements");
  if (n > (std::size_t{1} << 40))
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": allocate: " + std::to_string(n) + " elements is beyond any device",
                      "allocate at most 2^40 elements per buffer");
  auto slot = detail::guard_backend(*this, "allocate", [&] { return do_allocate(t, n); });
  if (!slot) return std::move(slot).error();
  return buffer{id_, *slot, t, n};
}

ROSTER_INLINE expected<void> device::release(const buffer& b) {
  if (auto ok = check_buffer(b, "release"); !ok) return ok;
  return detail::guard_backend(*this, "release", [&] { return do_release(b.slot); });
}

ROSTER_INLINE expected<void> device::upload_raw(const buffer& b, element_type t, const void* src,
                                                std::size_t count) {
  if (auto ok = check_buffer(b, "upload"); !ok) return ok;
  if (t != b.type)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": upload: host data is " + std::string(to_string(t)) + " but the buffer is " +
                          detail::describe(b),
                      "upload a span of the buffer's element type");
  if (count != b.size)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": upload: " + std::to_string(count) + " host elements into a " +
                          detail::describe(b),
                      "pass a host span of exactly the buffer's length");
  if (src == nullptr)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": upload: the host pointer is null for " + std::to_string(count) +
                          " elements into a " + detail::describe(b),
                      "pass host memory that holds the buffer's length, e.g. a std::vector's data()");
  return detail::guard_backend(*this, "upload", [&] { return do_upload(b, src); });
}

ROSTER_INLINE expected<void> device::download_raw(const buffer& b, element_type t, void* dst, std::size_t count) {
  if (auto ok = check_buffer(b, "download"); !ok) return ok;
  if (t != b.type)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": download: host memory is " + std::string(to_string(t)) +
                          " but the buffer is " + detail::describe(b),
                      "download into a span of the buffer's element type");
  if (count != b.size)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": download: a " + detail::describe(b) + " into " +
                          std::to_string(count) + " host elements",
                      "pass a host span of exactly the buffer's length");
  if (dst == nullptr)
    return make_error(errc::invalid_argument,
                      adapter().spec() + ": download: the host pointer is null for a " + detail::describe(b),
                      "pass host memory that holds the buffer's length, e.g. a std::vector's data()");
  return detail::guard_backend(*this, "download", [&] { return do_download(b, dst); });
}

ROSTER_INLINE expected<const kernel_entry*> device::kernel_for(const kernel_call& c) const {
  const std::string_view backend = adapter().backend;
  const element_type type = c.buffers.front().type;
  if (!c.variant.empty() || kernel_choices_.empty()) return find_kernel(c.op, backend, type, c.variant);
  // A recorded winner for this op, type and size class; the extent comes from
  // the signature, which every variant of one op and type shares.
  const auto entries = kernels_of(c.op);
  const kernel_entry* any = nullptr;
  for (const auto* e : entries)
    if (e->type == type) any = e;
  if (any != nullptr) {
    const std::uint32_t cls = size_class(call_extent(*any, c));
    for (const auto& k : kernel_choices_) {
      if (k.op != c.op || k.type != type || k.size_class != cls) continue;
      auto won = find_kernel(c.op, backend, type, k.variant);
      if (detail::trace_on())
        detail::trace(adapter().spec() + ": kernel '" + c.op + "' " + std::string(to_string(type)) +
                      " size class 2^" + std::to_string(cls) + ": " +
                      (won ? "variant '" + k.variant + "' by record"
                           : "recorded variant '" + k.variant + "' is not registered; the default runs"));
      if (won) return won;
      break;
    }
  }
  return find_kernel(c.op, backend, type);
}

ROSTER_INLINE expected<void> device::check_program(const program& p, std::vector<step>* lowered) const {
  if (auto ok = validate(p); !ok) return std::move(ok).error().prepend(adapter().spec());
  const device_caps c = caps();
  // The fused path runs one element type: a call is lowered only when its
  // type is the built-in steps' (the first lowered call's when there are none);
  // any other runs through the backend's call path, on its own. `lowered`
  // stays empty until a call is lowered: then it holds every step.
  bool have_fused = false;
  element_type fused = element_type::f64;
  if (lowered != nullptr)
    for (const auto& s : p.steps())
      if (buffers_of(s.op) > 0) {
        fused = s.out.type;
        have_fused = true;
        break;
      }
  const auto steps = p.steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const step& s = steps[i];
    if (lowered != nullptr && !lowered->empty()) lowered->push_back(s);
    if (s.op == op::call) {
      // A kernel: this device's backend must have it (the router's rule).
      auto k = kernel_for(*s.call);
      if (!k) return std::move(k).error().prepend(adapter().spec() + ": dispatch");
      // A built-in entry (the named or recorded variant, or the default) runs
      // as the built-in step, so a program of calls keeps the backend's
      // one-launch or one-submit path.
      if (lowered != nullptr) {
        const step b = builtin_step(**k, *s.call);
        const bool lower = b.op == op::grid_sync || (b.op != op::call && (!have_fused || b.out.type == fused));
        if (lower) {
          if (lowered->empty()) {
            lowered->reserve(steps.size());
            lowered->assign(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(i) + 1);
          }
          lowered->back() = b;
          if (b.op != op::grid_sync) {
            fused = b.out.type;
            have_fused = true;
          }
        }
      }
      for (const auto& b : s.call->buffers) {
        if (auto ok = check_buffer(b, "dispatch"); !ok) return ok;
        if (b.type == element_type::f64 && !c.f64)
          return make_error(errc::unsupported, adapter().spec() + ": dispatch: this device has no double support",
                            "use float buffers on this device");
      }
      continue;
    }
    if (!c.ops.contains(s.op))
      return make_error(errc::unsupported,
                        adapter().spec() + ": dispatch: this device does not run " + std::string(to_string(s.op)),
                        "route the program with roster::acquire_preferred(program), or remove the step");
    const buffer* bufs[3] = {&s.out, &s.in1, &s.in2};
    for (int b = 0; b < buffers_of(s.op); ++b)
      if (auto ok = check_buffer(*bufs[b], "dispatch"); !ok) return ok;
  }
  if (p.type() == element_type::f64 && !c.f64)
    return make_error(errc::unsupported, adapter().spec() + ": dispatch: this device has no double support",
                      "use float buffers on this device");
  return {};
}

ROSTER_INLINE expected<void> device::dispatch(const program& p) {
  if (!p.has_calls()) {  // built-in steps only: dispatched as they are
    if (auto ok = check_program(p); !ok) return ok;
    return detail::guard_backend(*this, "dispatch", [&] { return dispatch_steps(p.steps()); });
  }
  std::vector<step> lowered;  // filled only when a call runs as a built-in step
  if (auto ok = check_program(p, &lowered); !ok) return ok;
  const std::span<const step> steps = lowered.empty() ? p.steps() : std::span<const step>(lowered);
  return detail::guard_backend(*this, "dispatch", [&] { return dispatch_steps(steps); });
}

ROSTER_INLINE expected<std::chrono::nanoseconds> device::timed_dispatch(const program& p) {
  if (!p.has_calls()) {
    if (auto ok = check_program(p); !ok) return std::move(ok).error();
    return detail::guard_backend(*this, "dispatch", [&] { return timed_dispatch_steps(p.steps()); });
  }
  std::vector<step> lowered;
  if (auto ok = check_program(p, &lowered); !ok) return std::move(ok).error();
  const std::span<const step> steps = lowered.empty() ? p.steps() : std::span<const step>(lowered);
  return detail::guard_backend(*this, "dispatch", [&] { return timed_dispatch_steps(steps); });
}

ROSTER_INLINE expected<std::chrono::nanoseconds> device::timed_dispatch_steps(std::span<const step> steps) {
  if (auto ok = synchronize(); !ok) return std::move(ok).error();
  auto t0 = std::chrono::steady_clock::now();
  if (auto ok = dispatch_steps(steps); !ok) return std::move(ok).error();
  if (auto ok = synchronize(); !ok) return std::move(ok).error();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
}

namespace detail {
// Backends registered at run time (roster::register_factory, device.hpp): an
// immutable list published with one atomic pointer. Lists and entries are
// never freed, so a registration pointer stays valid for the process.
struct runtime_backend {
  std::string id;  // lower case; registration.id views it
  backend_registration registration;
  int rank;
};
struct runtime_backend_list {
  std::vector<const runtime_backend*> entries;
  const runtime_backend_list* retired_next = nullptr;
};
struct runtime_backend_registry {
  std::mutex mutex;
  std::atomic<const runtime_backend_list*> current{nullptr};
};
ROSTER_API ROSTER_INLINE runtime_backend_registry& runtime_backends() noexcept {
  static constinit runtime_backend_registry r;
  return r;
}
inline const runtime_backend_list* runtime_backend_snapshot() noexcept {
  return runtime_backends().current.load(std::memory_order_acquire);
}
}  // namespace detail

ROSTER_INLINE std::vector<backend_entry> registered_backends() {
  (void)load_plugin_path_once();
  backends_in_use pin;
  auto regs = inventory<backend_registration>();
  auto precs = inventory<backend_precedence>();
  auto caps = inventory<backend_capability>();
  std::vector<backend_entry> out;
  out.reserve(regs.size());
  for (const auto* r : regs) {
    backend_entry e{r, unranked, true};
    // All three inventories are sorted by id: binary search each.
    auto p = std::lower_bound(precs.begin(), precs.end(), r->id,
                              [](const backend_precedence* x, std::string_view id) { return x->id < id; });
    if (p != precs.end() && (*p)->id == r->id) e.rank = (*p)->rank;
    auto c = std::lower_bound(caps.begin(), caps.end(), r->id,
                              [](const backend_capability* x, std::string_view id) { return x->id < id; });
    if (c != caps.end() && (*c)->id == r->id) e.dispatches = (*c)->dispatches;
    out.push_back(e);
  }
  if (const auto* rt = detail::runtime_backend_snapshot())
    for (const auto* r : rt->entries) out.push_back(backend_entry{&r->registration, r->rank, true});
  std::stable_sort(out.begin(), out.end(), [](const backend_entry& a, const backend_entry& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.id() < b.id();
  });
  return out;
}

ROSTER_INLINE const backend_registration* find_backend(std::string_view id) noexcept {
  (void)load_plugin_path_once();
  backends_in_use pin;
  for (const auto* r : inventory<backend_registration>())
    if (detail::iequal(r->id, id)) return r;
  if (const auto* rt = detail::runtime_backend_snapshot())
    for (const auto* r : rt->entries)
      if (detail::iequal(r->id, id)) return &r->registration;
  return nullptr;
}

ROSTER_INLINE expected<std::unique_ptr<device>> detail::open_adapter(const backend_registration& backend,
                                                                     std::uint32_t ordinal) noexcept {
  backends_in_use pin;
  const std::string spec = std::string(backend.id) + ":" + std::to_string(ordinal);
  try {
    if (backend.open == nullptr)
      return make_error(errc::internal, std::string(backend.id) + ": the backend registered no factory",
                        "register the backend with ROSTER_REGISTER_BACKEND, which supplies its open()");
    auto d = backend.open(ordinal);
    if (!d) return std::move(d).error();
    if (*d == nullptr)
      return make_error(errc::internal, spec + ": the backend's factory returned no device and no error",
                        "fix the backend's open() to return a device or an error");
    return std::move(*d);
  } catch (const std::exception& e) {
    return make_error(errc::internal, spec + ": the backend's factory threw: " + std::string(e.what()),
                      "fix the backend's open() to return an error instead of throwing, or exclude it with "
                      "ROSTER_DEVICE_SELECTOR='!" +
                          std::string(backend.id) + ":*'");
  } catch (...) {
    return make_error(errc::internal, spec + ": the backend's factory threw a non-standard exception",
                      "fix the backend's open() to return an error instead of throwing, or exclude it with "
                      "ROSTER_DEVICE_SELECTOR='!" +
                          std::string(backend.id) + ":*'");
  }
}

ROSTER_INLINE expected<std::vector<adapter_info>> enumerate_adapters(const backend_registration& backend) noexcept {
  backends_in_use pin;
  try {
    if (backend.enumerate == nullptr) return std::vector<adapter_info>{};
    return backend.enumerate();
  } catch (const std::exception& e) {
    return make_error(errc::internal,
                      std::string(backend.id) + ": the backend's enumerator threw: " + std::string(e.what()),
                      "fix the backend's enumerate() to return an error instead of throwing, or exclude it with "
                      "ROSTER_DEVICE_SELECTOR='!" +
                          std::string(backend.id) + ":*'");
  } catch (...) {
    return make_error(errc::internal, std::string(backend.id) + ": the backend's enumerator threw",
                      "fix the backend's enumerate() to return an error instead of throwing");
  }
}

namespace detail {
template <class T>
expected<void> check_one() {
  auto info = inventory_info<T>();
  if (info.conflicts == 0) return {};
  return make_error(errc::conflict,
                    std::string("inventory<") + std::string(type_name<T>()) + ">: two submissions share one key (" +
                        info.kept_site + " and " + info.dropped_site + "); the one at " + info.kept_site +
                        " is kept",
                    "give each backend a unique id, or link only one of the two registrations");
}
}  // namespace detail

ROSTER_INLINE expected<void> check_backends() {
  if (auto conflict = detail::backend_conflict({})) return std::move(*conflict);
  if (auto ok = detail::check_one<backend_registration>(); !ok) return ok;
  if (auto ok = detail::check_one<backend_precedence>(); !ok) return ok;
  return detail::check_one<backend_capability>();
}

}  // namespace roster
