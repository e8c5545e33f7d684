#pragma once
// Private: the CUDA device's life and memory: opening it (its primary
// context, kernels, settings, stream, events and grids), buffers from
// cuMemAlloc, transfers on its stream, and its native handles. Dispatch is
// in dispatch-inl.hpp.

#include <roster/backends/cuda/detail/adapters.hpp>
#include <roster/backends/cuda/detail/driver.hpp>
#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/errors.hpp>
#include <roster/backends/cuda/detail/module.hpp>

#include <roster/env.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

namespace roster::cuda {

namespace detail {

// The settings a device reads from the environment when it opens.
struct settings {
  bool split = false;          // ROSTER_CUDA_GRID_SYNC=split: separate launches
  std::optional<int> variant;  // ROSTER_CUDA_VARIANT: the fast path's kernel shape (tuning)
};

inline expected<settings> read_settings() {
  settings s;
  auto mode = env::choice("ROSTER_CUDA_GRID_SYNC", {"native", "split", "auto"});
  if (!mode) return std::move(mode).error();
  s.split = *mode == std::optional<std::size_t>(1);
  auto variant = env::whole_number("ROSTER_CUDA_VARIANT", 0, detail::variant_count - 1);
  if (!variant) return std::move(variant).error();
  if (*variant) s.variant = static_cast<int>(**variant);
  return s;
}

}  // namespace detail

ROSTER_INLINE expected<std::unique_ptr<device>> device::open(std::uint32_t ordinal) {
  const std::string spec = "cuda:" + std::to_string(ordinal);
  // The settings first: a malformed value is an error on any machine.
  auto settings = detail::read_settings();
  if (!settings) return std::move(settings).error().prepend("cuda");
  auto count = detail::device_count();
  if (!count) return std::move(count).error();
  if (ordinal >= static_cast<std::uint32_t>(*count))
    return make_error(errc::not_found,
                      spec + ": no such adapter; this process sees " + std::to_string(*count) + " CUDA device" +
                          (*count == 1 ? "" : "s"),
                      "use an ordinal below " + std::to_string(*count) +
                          " (CUDA_VISIBLE_DEVICES renumbers the devices from 0), or list them with roster-info");

  auto info = detail::describe_adapter(static_cast<int>(ordinal));
  if (!info) return std::move(info).error();
  const detail::driver_api& cu = detail::api();
  std::unique_ptr<device> d(new device());
  d->info_ = std::move(*info);
  d->ordinal_ = static_cast<int>(ordinal);
  d->cooperative_ = d->info_.native_grid_sync;
  d->mode_ = d->cooperative_ && !settings->split ? grid_sync_mode::native : grid_sync_mode::split;

  // The primary context: the one the runtime makes current on cudaSetDevice,
  // so a user's runtime-API code shares roster's memory and stream.
  detail::cu_device dev = 0;
  if (int e = cu.cuDeviceGet(&dev, d->ordinal_); e != detail::cu_success)
    return detail::cuda_failure(e, spec, "cuDeviceGet");
  detail::cu_context context = nullptr;
  if (int e = cu.cuDevicePrimaryCtxRetain(&context, dev); e != detail::cu_success)
    return detail::cuda_failure(e, spec, "cuDevicePrimaryCtxRetain");
  d->context_ = context;
  if (auto ok = d->activate(); !ok) return std::move(ok).error();
  // The kernels' module is loaded at the first dispatch (ready()), as the
  // CUDA runtime loads a program's modules lazily: opening a device costs
  // what a bare runtime start costs, and a process that only asks or binds
  // pays nothing for the image.
  d->variant_ = settings->variant.value_or(detail::default_variant);
  detail::cu_stream stream = nullptr;
  if (int e = cu.cuStreamCreate(&stream, detail::cu_stream_non_blocking); e != detail::cu_success)
    return detail::cuda_failure(e, spec, "cuStreamCreate");
  d->stream_ = stream;
  detail::cu_event start = nullptr, stop = nullptr;
  if (int e = cu.cuEventCreate(&start, 0); e != detail::cu_success) return detail::cuda_failure(e, spec, "cuEventCreate");
  d->event_start_ = start;
  if (int e = cu.cuEventCreate(&stop, 0); e != detail::cu_success) return detail::cuda_failure(e, spec, "cuEventCreate");
  d->event_stop_ = stop;
  return d;
}

// Loads the kernels' module from the image and sizes the grids, once, before
// the first dispatch (the context is current).
ROSTER_INLINE expected<void> device::ready() {
  if (kernels_ != nullptr) return {};
  const detail::driver_api& cu = detail::api();
  auto kernels = std::make_unique<detail::kernel_set>();
  std::string what;
  const auto began = std::chrono::steady_clock::now();
  if (int e = detail::load_kernels(*kernels, variant_, what); e != detail::cu_success) {
    if (kernels->module != nullptr) (void)cu.cuModuleUnload(kernels->module);
    return detail::cuda_failure(e, info_.spec(), what);
  }
  loaded_.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count();
  kernels_ = kernels.release();
  int major = 0, minor = 0;
  detail::cu_device dev = 0;
  if (cu.cuDeviceGet(&dev, ordinal_) == detail::cu_success) {
    (void)cu.cuDeviceGetAttribute(&major, detail::cu_attr_compute_capability_major, dev);
    (void)cu.cuDeviceGetAttribute(&minor, detail::cu_attr_compute_capability_minor, dev);
  }
  loaded_.how = detail::describe_load(kernels_->stream[1][0], major * 10 + minor);
  if (auto ok = size_grids(); !ok) {
    (void)cu.cuModuleUnload(kernels_->module);
    delete kernels_;
    kernels_ = nullptr;
    return ok;
  }
  return {};
}

// Grids: every kernel gets the blocks that fit on the card at once, so a
// cooperative launch is always legal and a plain one needs no second wave.
ROSTER_INLINE expected<void> device::size_grids() {
  const detail::driver_api& cu = detail::api();
  const detail::kernel_set& k = *kernels_;
  const int sms = static_cast<int>(info_.compute_units);
  int largest = 1;
  auto grid_of = [&](detail::cu_function f, int block, int& out) -> expected<void> {
    int per_sm = 0;
    if (int e = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, block, 0); e != detail::cu_success)
      return detail::cuda_failure(e, info_.spec(), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    out = std::max(1, per_sm) * sms;
    largest = std::max(largest, out);
    return {};
  };
  for (int f64 = 0; f64 < 2; ++f64) {
    if (auto ok = grid_of(k.program_coop[f64], detail::block_threads, grid_program_[f64]); !ok) return ok;
    if (auto ok = grid_of(k.dot_coop[f64], detail::block_threads, grid_dot_[f64]); !ok) return ok;
  }
  for (int f64 = 0; f64 < 2; ++f64)
    for (int o = 0; o < detail::k_dot; ++o) {
      const int before = largest;
      if (auto ok = grid_of(k.stream[f64][o], detail::stream_block(o, k.variant), grid_stream_[f64][o]); !ok)
        return ok;
      largest = before;  // the fast path needs no reduction scratch
    }
  detail::cu_deviceptr partials = 0;
  if (int e = cu.cuMemAlloc(&partials, sizeof(double) * static_cast<std::size_t>(largest)); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "cuMemAlloc of the reduction scratch");
  partials_ = reinterpret_cast<double*>(static_cast<std::uintptr_t>(partials));
  return {};
}

ROSTER_INLINE device::~device() {
  // Errors here cannot be reported: the context may already be gone.
  const detail::driver_api& cu = detail::api();
  if (context_ == nullptr) return;
  (void)cu.cuCtxSetCurrent(static_cast<detail::cu_context>(context_));
  auto stream = static_cast<detail::cu_stream>(stream_);
  if (stream != nullptr) (void)cu.cuStreamSynchronize(stream);
  for (auto& s : slots_)
    if (s.ptr != nullptr) (void)cu.cuMemFree(reinterpret_cast<std::uintptr_t>(s.ptr));
  if (partials_ != nullptr) (void)cu.cuMemFree(reinterpret_cast<std::uintptr_t>(partials_));
  if (event_start_ != nullptr) (void)cu.cuEventDestroy(static_cast<detail::cu_event>(event_start_));
  if (event_stop_ != nullptr) (void)cu.cuEventDestroy(static_cast<detail::cu_event>(event_stop_));
  if (stream != nullptr) (void)cu.cuStreamDestroy(stream);
  if (kernels_ != nullptr && kernels_->module != nullptr) (void)cu.cuModuleUnload(kernels_->module);
  delete kernels_;
  detail::cu_device dev = 0;
  if (cu.cuDeviceGet(&dev, ordinal_) == detail::cu_success) (void)cu.cuDevicePrimaryCtxRelease(dev);
}

ROSTER_INLINE device_caps device::caps() const noexcept {
  device_caps c;
  c.native_grid_sync = mode_ == grid_sync_mode::native;
  c.f64 = true;
  c.ops = op_set::all();
  return c;
}

ROSTER_INLINE expected<void> device::set_mode(grid_sync_mode m) {
  if (m == grid_sync_mode::native && !cooperative_)
    return make_error(errc::unsupported, info_.spec() + ": this card does not support cooperative launch",
                      "use grid_sync_mode::split on this card (roster::acquire applies the split by itself)");
  mode_ = m;
  return {};
}

// Makes the device's primary context current on this thread, as
// cudaSetDevice(ordinal) does for the runtime.
ROSTER_INLINE expected<void> device::activate() const {
  // Every dispatch asks, and the thread's context is ours already but for the
  // first call on a thread or after another device's: then nothing is set.
  const detail::driver_api& cu = detail::api();
  detail::cu_context current = nullptr;
  if (cu.cuCtxGetCurrent(&current) == detail::cu_success && current == static_cast<detail::cu_context>(context_))
    return {};
  if (int e = cu.cuCtxSetCurrent(static_cast<detail::cu_context>(context_)); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "cuCtxSetCurrent");
  return {};
}

ROSTER_INLINE void* device::native_pointer(const buffer& b) const noexcept {
  return owns(b) && b.owner == id() ? slots_[b.slot].ptr : nullptr;
}

ROSTER_INLINE expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind == code_load::native_id) {  // roster::kernels_loaded: the module, loaded now if no dispatch has yet
    if (auto ok = activate(); !ok) return std::move(ok).error();
    if (auto ok = ready(); !ok) return std::move(ok).error();
    *static_cast<code_load*>(out) = loaded_;
    return true;
  }
  if (kind != native::native_id) return false;
  if (auto ok = activate(); !ok) return std::move(ok).error();
  *static_cast<native*>(out) =
      native{ordinal_, static_cast<::CUctx_st*>(context_), static_cast<::CUstream_st*>(stream_)};
  return true;
}

ROSTER_INLINE expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  if (!owns(b)) return make_error(errc::invalid_argument, "the buffer was released", "allocate a new buffer");
  *static_cast<native::buffer*>(out) = native::buffer{slots_[b.slot].ptr, b.type, b.size};
  return true;
}

ROSTER_INLINE bool device::owns(const buffer& b) const noexcept {
  if (b.slot >= slots_.size()) return false;
  const slot& s = slots_[b.slot];
  return s.ptr != nullptr && s.type == b.type && s.size == b.size;
}

ROSTER_INLINE expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  if (auto ok = activate(); !ok) return std::move(ok).error();
  detail::cu_deviceptr p = 0;
  const std::size_t bytes = n * size_of(t);
  if (int e = detail::api().cuMemAlloc(&p, bytes); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(),
                                "allocate: cuMemAlloc of " + std::to_string(bytes) + " bytes (" + std::to_string(n) +
                                    " " + std::string(to_string(t)) + " elements)");
  // Slots are never reused, so a released buffer's stale handle stays invalid.
  slots_.push_back({reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)), t, n});
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

ROSTER_INLINE expected<void> device::do_release(std::uint32_t index) {
  if (auto ok = activate(); !ok) return ok;
  slot& s = slots_[index];
  // The device's work runs on its non-blocking stream, which cuMemFree does
  // not wait for: finish it first, as the runtime's cudaFree did.
  const detail::driver_api& cu = detail::api();
  if (int e = cu.cuStreamSynchronize(static_cast<detail::cu_stream>(stream_)); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "release: cuStreamSynchronize");
  if (int e = cu.cuMemFree(reinterpret_cast<std::uintptr_t>(s.ptr)); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "release: cuMemFree");
  s = slot{};
  return {};
}

ROSTER_INLINE expected<void> device::do_upload(const buffer& b, const void* src) {
  if (auto ok = activate(); !ok) return ok;
  const detail::driver_api& cu = detail::api();
  auto stream = static_cast<detail::cu_stream>(stream_);
  const std::size_t bytes = b.size * size_of(b.type);
  if (int e = cu.cuMemcpyHtoDAsync(reinterpret_cast<std::uintptr_t>(slots_[b.slot].ptr), src, bytes, stream);
      e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "upload: cuMemcpyHtoDAsync");
  // The host memory may change as soon as we return.
  if (int e = cu.cuStreamSynchronize(stream); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "upload: cuStreamSynchronize");
  return {};
}

ROSTER_INLINE expected<void> device::do_download(const buffer& b, void* dst) {
  if (auto ok = activate(); !ok) return ok;
  const detail::driver_api& cu = detail::api();
  auto stream = static_cast<detail::cu_stream>(stream_);
  const std::size_t bytes = b.size * size_of(b.type);
  if (int e = cu.cuMemcpyDtoHAsync(dst, reinterpret_cast<std::uintptr_t>(slots_[b.slot].ptr), bytes, stream);
      e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "download: cuMemcpyDtoHAsync");
  if (int e = cu.cuStreamSynchronize(stream); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "download: cuStreamSynchronize");
  return {};
}

ROSTER_INLINE expected<void> device::synchronize() {
  if (auto ok = activate(); !ok) return ok;
  if (int e = detail::api().cuStreamSynchronize(static_cast<detail::cu_stream>(stream_)); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "synchronize: cuStreamSynchronize");
  return {};
}

}  // namespace roster::cuda
