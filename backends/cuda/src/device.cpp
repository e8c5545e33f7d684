// The CUDA device's life and memory: opening it (its settings, stream,
// events and grids), buffers from cudaMalloc, transfers on its stream, and
// its native handles. Dispatch is in dispatch.cpp.

#include "adapters.hpp"
#include "driver.hpp"
#include "errors.hpp"
#include "kernels.hpp"

#include <roster/env.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <optional>
#include <string>

namespace roster::cuda {

using detail::cuda_failure;
using detail::exclude_fix;

namespace {

// The settings a device reads from the environment when it opens.
struct settings {
  bool split = false;          // ROSTER_CUDA_GRID_SYNC=split: separate launches
  std::optional<int> variant;  // ROSTER_CUDA_VARIANT: the fast path's kernel shape (tuning)
};

expected<settings> read_settings() {
  settings s;
  auto mode = env::choice("ROSTER_CUDA_GRID_SYNC", {"native", "split", "auto"});
  if (!mode) return std::move(mode).error();
  s.split = *mode == std::optional<std::size_t>(1);
  auto variant = env::whole_number("ROSTER_CUDA_VARIANT", 0, detail::variant_count - 1);
  if (!variant) return std::move(variant).error();
  if (*variant) s.variant = static_cast<int>(**variant);
  return s;
}

}  // namespace

expected<std::unique_ptr<device>> device::open(std::uint32_t ordinal) {
  const std::string spec = "cuda:" + std::to_string(ordinal);
  // The settings first: a malformed value is an error on any machine.
  auto settings = read_settings();
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
  std::unique_ptr<device> d(new device());
  d->info_ = std::move(*info);
  d->ordinal_ = static_cast<int>(ordinal);
  d->cooperative_ = d->info_.native_grid_sync;
  d->mode_ = d->cooperative_ && !settings->split ? grid_sync_mode::native : grid_sync_mode::split;
  detail::set_variant(settings->variant.value_or(detail::default_variant));  // process-wide: the kernels' shape

  if (auto ok = d->activate(); !ok) return std::move(ok).error();
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess)
    return cuda_failure(e, spec, "cudaStreamCreateWithFlags");
  d->stream_ = stream;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaError_t e = cudaEventCreate(&start); e != cudaSuccess) return cuda_failure(e, spec, "cudaEventCreate");
  d->event_start_ = start;
  if (cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) return cuda_failure(e, spec, "cudaEventCreate");
  d->event_stop_ = stop;

  // Grids: every kernel gets the blocks that fit on the card at once, so a
  // cooperative launch is always legal and a plain one needs no second wave.
  const int sms = static_cast<int>(d->info_.compute_units);
  int largest = 1;
  auto grid_of = [&](detail::kernel_id k, bool f64, int& out) -> expected<void> {
    int per_sm = 0;
    if (int e = detail::blocks_per_sm(k, f64, &per_sm); e != 0)
      return cuda_failure(static_cast<cudaError_t>(e), spec, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    out = std::max(1, per_sm) * sms;
    largest = std::max(largest, out);
    return {};
  };
  for (int f64 = 0; f64 < 2; ++f64) {
    if (auto ok = grid_of(detail::kernel_id::program_coop, f64 != 0, d->grid_program_[f64]); !ok)
      return std::move(ok).error();
    if (auto ok = grid_of(detail::kernel_id::dot_coop, f64 != 0, d->grid_dot_[f64]); !ok)
      return std::move(ok).error();
  }
  for (int f64 = 0; f64 < 2; ++f64)
    for (int o = 0; o < detail::k_dot; ++o) {
      int per_sm = 0;
      if (int e = detail::stream_blocks_per_sm(static_cast<detail::kop>(o), f64 != 0, &per_sm); e != 0)
        return cuda_failure(static_cast<cudaError_t>(e), spec, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      d->grid_stream_[f64][o] = std::max(1, per_sm) * sms;
    }
  void* partials = nullptr;
  if (cudaError_t e = cudaMalloc(&partials, sizeof(double) * static_cast<std::size_t>(largest)); e != cudaSuccess)
    return cuda_failure(e, spec, "cudaMalloc of the reduction scratch");
  d->partials_ = static_cast<double*>(partials);
  return d;
}

device::~device() {
  // Errors here cannot be reported: the context may already be gone.
  (void)cudaSetDevice(ordinal_);
  if (stream_ != nullptr) (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& s : slots_)
    if (s.ptr != nullptr) (void)cudaFree(s.ptr);
  if (partials_ != nullptr) (void)cudaFree(partials_);
  if (event_start_ != nullptr) (void)cudaEventDestroy(static_cast<cudaEvent_t>(event_start_));
  if (event_stop_ != nullptr) (void)cudaEventDestroy(static_cast<cudaEvent_t>(event_stop_));
  if (stream_ != nullptr) (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  (void)cudaGetLastError();
}

device_caps device::caps() const noexcept {
  device_caps c;
  c.native_grid_sync = mode_ == grid_sync_mode::native;
  c.f64 = true;
  c.ops = op_set::all();
  return c;
}

expected<void> device::set_mode(grid_sync_mode m) {
  if (m == grid_sync_mode::native && !cooperative_)
    return make_error(errc::unsupported, info_.spec() + ": this card does not support cooperative launch",
                      "use grid_sync_mode::split on this card (roster::acquire applies the split by itself)");
  mode_ = m;
  return {};
}

expected<void> device::activate() const {
  if (cudaError_t e = cudaSetDevice(ordinal_); e != cudaSuccess) return cuda_failure(e, info_.spec(), "cudaSetDevice");
  return {};
}

void* device::native_pointer(const buffer& b) const noexcept {
  return owns(b) && b.owner == id() ? slots_[b.slot].ptr : nullptr;
}

expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  if (auto ok = activate(); !ok) return std::move(ok).error();
  // The runtime has no call that returns a context: ask the driver, through
  // the runtime's entry-point lookup (roster links cudart only, not libcuda).
  using get_current_fn = int (*)(::CUctx_st**);  // cuCtxGetCurrent: CUresult (CUcontext*)
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaError_t e = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found);
      e != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    (void)cudaGetLastError();
    return cuda_failure(e != cudaSuccess ? e : cudaErrorSymbolNotFound, info_.spec(),
                        "native: cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  }
  ::CUctx_st* context = nullptr;
  if (int r = reinterpret_cast<get_current_fn>(fn)(&context); r != 0 || context == nullptr)
    return make_error(errc::device_fault,
                      info_.spec() + ": native: cuCtxGetCurrent returned CUresult " + std::to_string(r) +
                          " and no context after cudaSetDevice(" + std::to_string(ordinal_) + ")",
                      "check the driver with nvidia-smi; run the program under compute-sanitizer to find an "
                      "earlier fault, " + std::string(exclude_fix));
  *static_cast<native*>(out) = native{ordinal_, context, static_cast<::CUstream_st*>(stream_)};
  return true;
}

expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  if (!owns(b)) return make_error(errc::invalid_argument, "the buffer was released", "allocate a new buffer");
  *static_cast<native::buffer*>(out) = native::buffer{slots_[b.slot].ptr, b.type, b.size};
  return true;
}

bool device::owns(const buffer& b) const noexcept {
  if (b.slot >= slots_.size()) return false;
  const slot& s = slots_[b.slot];
  return s.ptr != nullptr && s.type == b.type && s.size == b.size;
}

expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  if (auto ok = activate(); !ok) return std::move(ok).error();
  void* p = nullptr;
  const std::size_t bytes = n * size_of(t);
  if (cudaError_t e = cudaMalloc(&p, bytes); e != cudaSuccess) {
    (void)cudaGetLastError();
    return cuda_failure(e, info_.spec(),
                        "allocate: cudaMalloc of " + std::to_string(bytes) + " bytes (" + std::to_string(n) + " " +
                            std::string(to_string(t)) + " elements)");
  }
  // Slots are never reused, so a released buffer's stale handle stays invalid.
  slots_.push_back({p, t, n});
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

expected<void> device::do_release(std::uint32_t index) {
  if (auto ok = activate(); !ok) return ok;
  slot& s = slots_[index];
  // cudaFree waits for work that may still use the buffer.
  if (cudaError_t e = cudaFree(s.ptr); e != cudaSuccess) return cuda_failure(e, info_.spec(), "release: cudaFree");
  s = slot{};
  return {};
}

expected<void> device::do_upload(const buffer& b, const void* src) {
  if (auto ok = activate(); !ok) return ok;
  auto stream = static_cast<cudaStream_t>(stream_);
  const std::size_t bytes = b.size * size_of(b.type);
  if (cudaError_t e = cudaMemcpyAsync(slots_[b.slot].ptr, src, bytes, cudaMemcpyHostToDevice, stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "upload: cudaMemcpyAsync");
  // The host memory may change as soon as we return.
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "upload: cudaStreamSynchronize");
  return {};
}

expected<void> device::do_download(const buffer& b, void* dst) {
  if (auto ok = activate(); !ok) return ok;
  auto stream = static_cast<cudaStream_t>(stream_);
  const std::size_t bytes = b.size * size_of(b.type);
  if (cudaError_t e = cudaMemcpyAsync(dst, slots_[b.slot].ptr, bytes, cudaMemcpyDeviceToHost, stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "download: cudaMemcpyAsync");
  if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "download: cudaStreamSynchronize");
  return {};
}

expected<void> device::synchronize() {
  if (auto ok = activate(); !ok) return ok;
  if (cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "synchronize: cudaStreamSynchronize");
  return {};
}

}  // namespace roster::cuda
