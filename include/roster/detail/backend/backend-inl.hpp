#pragma once
// Private: the device front end and the backend lookups.

#include <roster/backend.hpp>
#include <roster/kernels.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/guard.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace roster {

ROSTER_INLINE std::string adapter_info::uuid_string() const {
  if (!has_uuid()) return {};
  // NVIDIA's tools (nvidia-smi, CUDA_VISIBLE_DEVICES, NVML) write a GPU's
  // UUID with "GPU-"; everyone else (Vulkan's deviceUUID, a CPU's identity)
  // writes the plain form. A CPU is never labelled a GPU, whatever its vendor.
  const bool nvidia_gpu = vendor_id == 0x10de && type != device_type::cpu;
  char out[48];
  const auto* u = uuid.data();
  std::snprintf(out, sizeof out, "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                nvidia_gpu ? "GPU-" : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                u[12], u[13], u[14], u[15]);
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
// The spec of a device, made only when an error names it.
inline auto spec_of(const device& d) noexcept {
  return [&d] { return d.adapter().spec(); };
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
  auto slot = detail::guarded(detail::spec_of(*this), adapter().backend, "allocate", [&] { return do_allocate(t, n); });
  if (!slot) return std::move(slot).error();
  return buffer{id_, *slot, t, n};
}

ROSTER_INLINE expected<void> device::release(const buffer& b) {
  if (auto ok = check_buffer(b, "release"); !ok) return ok;
  return detail::guarded(detail::spec_of(*this), adapter().backend, "release", [&] { return do_release(b.slot); });
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
  return detail::guarded(detail::spec_of(*this), adapter().backend, "upload", [&] { return do_upload(b, src); });
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
  return detail::guarded(detail::spec_of(*this), adapter().backend, "download", [&] { return do_download(b, dst); });
}

namespace detail {
// The built-in entries of a backend whose registration places none (one
// registered at run time, or a registration submitted by hand): its op set
// stands for them.
template <class T>
inline constexpr kernel_entry generic_builtin[op_count] = {
    builtin_kernel<T>(op::fill, ""),  builtin_kernel<T>(op::copy, ""),    builtin_kernel<T>(op::mul, ""),
    builtin_kernel<T>(op::add, ""),   builtin_kernel<T>(op::triad, ""),   builtin_kernel<T>(op::nstream, ""),
    builtin_kernel<T>(op::dot, ""),   builtin_kernel<T>(op::grid_sync, "")};

// Finds a call's kernel; a built-in op the backend's op set has and no entry
// names runs as its generic built-in entry.
inline expected<const kernel_entry*> find_kernel_or_builtin(const kernel_call& c, std::string_view backend,
                                                            element_type type, std::string_view variant) {
  auto found = find_kernel(c.op, backend, type, variant);
  if (found || !variant.empty()) return found;
  const op o = builtin_op(c.op);
  if (o == op::call) return found;
  const backend_registration* r = find_backend(backend);
  if (r == nullptr || !r->ops.contains(o)) return found;
  for (const auto* e : kernels_of(c.op))
    if (e->backend == backend) return found;  // it places entries: they decide
  return type == element_type::f32 ? &generic_builtin<float>[static_cast<std::size_t>(o)]
                                   : &generic_builtin<double>[static_cast<std::size_t>(o)];
}
}  // namespace detail

namespace detail {
// kernel_for's answers, remembered per thread. A dispatch looks each call's
// kernel up twice (its check, then the backend's run), and a solver's loop
// dispatches the same calls again and again: three or four binary searches
// of the op's name each time were half of a user kernel's dispatch on the
// CPU (bench kernel_call_bench, cpu_paired). An answer is reused only when
// all it depends on matches: the call's op, variant and element type and the
// device's backend (read from the answer itself), the device, its tuning
// choices and, under them, the call's size class, and the kernel inventory's
// snapshot (replaced at every module load or unload, never freed). The
// call's address only picks the slot; errors and generic built-in entries
// (which depend on the backend's registration) are looked up every time.
struct kernel_memo {
  const kernel_entry* entry = nullptr;
  const kernel_entry* const* inventory = nullptr;
  const kernel_choice* choices = nullptr;
  std::size_t choice_count = 0;
  std::uint64_t device = 0;
  std::uint32_t size_class = 0;
  bool named = false;  // the call named its variant
};
inline kernel_memo& kernel_memo_for(const kernel_call& c) noexcept {
  thread_local kernel_memo memos[16];
  return memos[(reinterpret_cast<std::uintptr_t>(&c) >> 4) % 16];
}
inline bool is_generic_builtin(const kernel_entry* e) noexcept {
  return (e >= generic_builtin<float> && e < generic_builtin<float> + op_count) ||
         (e >= generic_builtin<double> && e < generic_builtin<double> + op_count);
}
}  // namespace detail

ROSTER_INLINE expected<const kernel_entry*> device::kernel_for(const kernel_call& c) const {
  const std::string_view backend = adapter().backend;
  const element_type type = c.buffers.front().type;
  const bool by_record = c.variant.empty() && !kernel_choices_.empty();
  const kernel_entry* const* snapshot = inventory<kernel_entry>().data();
  detail::kernel_memo& memo = detail::kernel_memo_for(c);
  if (const kernel_entry* m = memo.entry;
      m != nullptr && memo.device == id_ && memo.inventory == snapshot && memo.choices == kernel_choices_.data() &&
      memo.choice_count == kernel_choices_.size() && m->type == type && memo.named == !c.variant.empty() &&
      m->op == c.op && m->backend == backend && (c.variant.empty() || m->variant == c.variant) &&
      (!by_record || memo.size_class == size_class(call_extent(*m, c))))
    return m;
  auto found = [&]() -> expected<const kernel_entry*> {
    if (!by_record) return detail::find_kernel_or_builtin(c, backend, type, c.variant);
    // A recorded winner for this op, type and size class; the extent comes
    // from the signature, which every variant of one op and type shares.
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
    return detail::find_kernel_or_builtin(c, backend, type, {});
  }();
  if (found && !detail::is_generic_builtin(*found))
    memo = detail::kernel_memo{*found, snapshot, kernel_choices_.data(), kernel_choices_.size(), id_,
                               by_record ? size_class(call_extent(**found, c)) : 0u, !c.variant.empty()};
  return found;
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
    return detail::guarded(detail::spec_of(*this), adapter().backend, "dispatch", [&] { return dispatch_steps(p.steps()); });
  }
  std::vector<step> lowered;  // filled only when a call runs as a built-in step
  if (auto ok = check_program(p, &lowered); !ok) return ok;
  const std::span<const step> steps = lowered.empty() ? p.steps() : std::span<const step>(lowered);
  return detail::guarded(detail::spec_of(*this), adapter().backend, "dispatch", [&] { return dispatch_steps(steps); });
}

ROSTER_INLINE expected<duration_ns> device::timed_dispatch(const program& p) {
  if (!p.has_calls()) {
    if (auto ok = check_program(p); !ok) return std::move(ok).error();
    return detail::guarded(detail::spec_of(*this), adapter().backend, "dispatch", [&] { return timed_dispatch_steps(p.steps()); });
  }
  std::vector<step> lowered;
  if (auto ok = check_program(p, &lowered); !ok) return std::move(ok).error();
  const std::span<const step> steps = lowered.empty() ? p.steps() : std::span<const step>(lowered);
  return detail::guarded(detail::spec_of(*this), adapter().backend, "dispatch", [&] { return timed_dispatch_steps(steps); });
}

ROSTER_INLINE expected<duration_ns> device::timed_dispatch_steps(std::span<const step> steps) {
  if (auto ok = synchronize(); !ok) return std::move(ok).error();
  auto t0 = std::chrono::steady_clock::now();
  if (auto ok = dispatch_steps(steps); !ok) return std::move(ok).error();
  if (auto ok = synchronize(); !ok) return std::move(ok).error();
  return duration_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

ROSTER_INLINE detail::runtime_backend_registry& detail::runtime_backends() noexcept {
  static constinit runtime_backend_registry r;
  return r;
}

ROSTER_INLINE std::span<const backend_entry> registered_backends() {
  (void)load_plugin_path_once();
  backends_in_use pin;
  auto regs = inventory<backend_registration>();
  auto precs = inventory<backend_precedence>();
  auto caps = inventory<backend_capability>();
  const auto* rt = detail::runtime_backend_snapshot();
  static std::atomic<const detail::backend_list*> current{nullptr};
  static std::mutex building;
  auto fits = [&](const detail::backend_list* l) {
    return l != nullptr && l->registrations == regs.data() && l->registration_count == regs.size() &&
           l->precedences == precs.data() && l->capabilities == caps.data() && l->runtime == rt;
  };
  if (const auto* l = current.load(std::memory_order_acquire); fits(l)) return l->entries;
  std::lock_guard lock(building);
  if (const auto* l = current.load(std::memory_order_acquire); fits(l)) return l->entries;
  auto list = std::make_unique<detail::backend_list>();
  list->registrations = regs.data();
  list->registration_count = regs.size();
  list->precedences = precs.data();
  list->capabilities = caps.data();
  list->runtime = rt;
  list->previous = current.load(std::memory_order_relaxed);
  auto& out = list->entries;
  out.reserve(regs.size() + (rt != nullptr ? rt->entries.size() : 0));
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
  if (rt != nullptr)
    for (const auto* r : rt->entries) out.push_back(backend_entry{&r->registration, r->rank, true});
  std::stable_sort(out.begin(), out.end(), [](const backend_entry& a, const backend_entry& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.id() < b.id();
  });
  // Never freed, and chained to the list it replaces: views handed out
  // earlier stay valid (and stay reachable, so a leak check sees no leak).
  const auto* published = list.release();
  current.store(published, std::memory_order_release);
  return published->entries;
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

ROSTER_INLINE expected<std::unique_ptr<device>> detail::open_registered(const backend_registration& backend,
                                                                        std::uint32_t ordinal) {
  expected<std::unique_ptr<device>> d = make_error(errc::internal, std::string(backend.id) + ": the backend registered no factory",
                                                   "register the backend with ROSTER_REGISTER_BACKEND, which supplies its open()");
  if (backend.open != nullptr) {
    d = backend.open(open_access::key(), ordinal);
  } else if (const auto* rt = runtime_backend_snapshot()) {
    for (const auto* e : rt->entries)
      if (&e->registration == &backend) d = e->factory(ordinal);
  }
  if (d && *d == nullptr)
    return make_error(errc::internal,
                      std::string(backend.id) + ":" + std::to_string(ordinal) +
                          ": the backend's factory returned no device and no error",
                      "fix the backend's open() to return a device or an error");
  return d;
}

namespace detail {
// What one backend may report. A machine has tens of adapters per API (eight
// GPUs of seven MIG instances each is 56); a plugin that reports 100,000 made
// every scan, trace and table that long.
inline constexpr std::size_t max_adapters_per_backend = 1024;

// Says once per backend (the first 16 backends) on stderr, and in the trace
// each time, that its list was cut to the cap.
inline void say_adapters_cut(std::string_view id, std::size_t reported) noexcept {
  try {
    const error e(errc::unsupported,
                  "backend '" + printable(id) + "' reported " + std::to_string(reported) +
                      " adapters, more than the " + std::to_string(max_adapters_per_backend) +
                      " one backend may report; the first " + std::to_string(max_adapters_per_backend) +
                      " are used",
                  "fix the backend's enumerate() to report each device it can open once, or leave it out with "
                  "ROSTER_DEVICE_SELECTOR='!" + printable(id) + ":*'");
    trace(e.message());
    static constinit std::mutex m;
    static std::array<std::string, 16> said{};
    std::lock_guard lock(m);
    for (auto& s : said) {
      if (s == id) return;
      if (!s.empty()) continue;
      s = std::string(id);
      std::fprintf(stderr, "roster: warning: %s\n", e.message().c_str());
      return;
    }
  } catch (...) {
  }
}
}  // namespace detail

ROSTER_INLINE expected<std::vector<adapter_info>> enumerate_adapters(const backend_registration& backend) noexcept {
  backends_in_use pin;
  auto listed = detail::guarded(backend.id, backend.id, "enumerate", [&]() -> expected<std::vector<adapter_info>> {
    if (backend.enumerate == nullptr) return std::vector<adapter_info>{};
    return backend.enumerate();
  });
  if (listed && listed->size() > detail::max_adapters_per_backend) {
    detail::say_adapters_cut(backend.id, listed->size());
    listed->resize(detail::max_adapters_per_backend);
    listed->shrink_to_fit();
  }
  return listed;
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
