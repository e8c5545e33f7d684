// The CUDA backend's device class, enumeration and registration. Built by the
// C++ compiler; the kernels live in kernels.cu behind kernels.hpp.

#include <roster/backends/cuda.hpp>

#include <roster/detail/gpu_list.hpp>

#include "kernels.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace roster::cuda {

namespace {

using detail::kprogram;
using detail::ksegment;
using detail::kstep;

constexpr std::string_view exclude_fix = "or exclude the backend with ROSTER_DEVICE_SELECTOR='!cuda:*'";

errc category_of(cudaError_t e) noexcept {
  switch (e) {
    case cudaErrorMemoryAllocation: return errc::out_of_memory;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorDevicesUnavailable:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInitializationError: return errc::unavailable;
    case cudaErrorInvalidDevice: return errc::not_found;
    default: return errc::device_fault;
  }
}

// The usual cure for a CUDA error met while working, by code.
std::string fix_for(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return "allocate fewer or smaller buffers, or release buffers you no longer need";
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
      return "install the NVIDIA driver for CUDA 13, " + std::string(exclude_fix);
    case cudaErrorNoDevice:
      return "check nvidia-smi and CUDA_VISIBLE_DEVICES, " + std::string(exclude_fix);
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return "rebuild roster with this card's architecture in backends/cuda/meson.build, " + std::string(exclude_fix);
    case cudaErrorCooperativeLaunchTooLarge:
      return "run with ROSTER_CUDA_GRID_SYNC=split, or report the card and driver to roster's maintainers";
    default:
      return "a kernel or the card faulted and the CUDA context is unusable: restart the process; run it under "
             "compute-sanitizer to find the cause, " + std::string(exclude_fix);
  }
}

// An error for a failed CUDA call made while doing `what` on adapter `spec`.
roster::error cuda_failure(cudaError_t e, const std::string& spec, std::string_view what) {
  return make_cuda_error(static_cast<int>(e), spec + ": " + std::string(what), fix_for(e));
}

// Reads the first line of a text file of the driver's (/proc), or returns "".
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// Returns the driver's own version ("580.159.04") from /proc, or "".
std::string kernel_driver_version() {
  const std::string line = read_line("/proc/driver/nvidia/version");
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
  // (older drivers: "... x86_64 Kernel Module  580.159.04  Thu ..."): the first dotted number.
  std::size_t at = line.find("Module");
  while (at != std::string::npos && at < line.size()) {
    const std::size_t begin = line.find_first_not_of(' ', at);
    if (begin == std::string::npos) break;
    const std::size_t end = std::min(line.find(' ', begin), line.size());
    const std::string word = line.substr(begin, end - begin);
    if (!word.empty() && word.find('.') != std::string::npos &&
        word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
    at = end;
  }
  return {};
}

expected<adapter_info> describe_adapter(int ordinal) {
  cudaDeviceProp prop{};
  if (cudaError_t e = cudaGetDeviceProperties(&prop, ordinal); e != cudaSuccess)
    return cuda_failure(e, "cuda:" + std::to_string(ordinal), "cudaGetDeviceProperties");
  adapter_info a;
  a.backend = "cuda";
  a.ordinal = static_cast<std::uint32_t>(ordinal);
  a.name = prop.name;
  a.type = prop.integrated ? device_type::integrated_gpu : device_type::discrete_gpu;
  std::memcpy(a.uuid.data(), prop.uuid.bytes, 16);
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
  a.pci_address = pci;
  a.vendor_id = 0x10de;
  // The runtime applied CUDA_VISIBLE_DEVICES before listing this device: its
  // adapters are the mask's visible set for every other backend's (circuits).
  a.applied_mask = "CUDA_VISIBLE_DEVICES";
  // The runtime does not give the PCI device id; sysfs does, where it is
  // mounted (read as the machine's GPU list reads it, ROSTER_SYSFS_ROOT too).
  a.device_id = roster::detail::parse_hex_id(
      roster::detail::read_small_file(roster::detail::sysfs_root() + "/bus/pci/devices/" + a.pci_address + "/device"));
  a.memory_bytes = prop.totalGlobalMem;
  a.compute_units = static_cast<std::uint32_t>(prop.multiProcessorCount);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  std::string cuda_version = "CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  const std::string kernel = kernel_driver_version();
  a.driver_version = kernel.empty() ? cuda_version : kernel + " (" + cuda_version + ")";
  a.native_grid_sync = prop.cooperativeLaunch != 0;
  a.f64 = true;
  a.ops = op_set::all();
  return a;
}

// ROSTER_CUDA_GRID_SYNC: "split" forces separate launches; "native" or unset
// uses cooperative launch where the card supports it.
expected<bool> env_wants_split() {
  const char* v = std::getenv("ROSTER_CUDA_GRID_SYNC");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "native" || std::string_view(v) == "auto") return false;
  if (std::string_view(v) == "split") return true;
  return make_error(errc::invalid_argument,
                    "ROSTER_CUDA_GRID_SYNC='" + std::string(v) + "' is not one of native, split, auto",
                    "set ROSTER_CUDA_GRID_SYNC to native, split or auto, or unset it");
}

// The elements a step walks: a dot's inputs, otherwise its output.
std::uint64_t length_of(const step& s) noexcept { return s.op == op::dot ? s.in1.size : s.out.size; }

// A grid no larger than n elements need (one 16-byte vector per thread), so a
// small program does not start hundreds of idle blocks.
int fit(int full, std::uint64_t n, bool f64) noexcept {
  const std::uint64_t per_block = std::uint64_t{detail::block_threads} * (f64 ? 2 : 4);
  const std::uint64_t need = (n + per_block - 1) / per_block;
  return need < static_cast<std::uint64_t>(full) ? static_cast<int>(std::max<std::uint64_t>(need, 1)) : full;
}

}  // namespace

error make_cuda_error(int cuda_code, std::string_view what, std::string_view fix) {
  const auto e = static_cast<cudaError_t>(cuda_code);
  const char* name = cudaGetErrorName(e);
  const char* text = cudaGetErrorString(e);
  std::string msg(what);
  msg += ": ";
  msg += text != nullptr ? text : "unknown error";
  msg += " (";
  msg += name != nullptr ? name : "cudaError?";
  msg += ", " + std::to_string(cuda_code) + ")";
  return error(category_of(e), msg, fix);
}

expected<std::vector<adapter_info>> backend::enumerate() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: the runtime keeps the last error per thread
    if (category_of(e) == errc::unavailable) return std::vector<adapter_info>{};
    return cuda_failure(e, "cuda", "cudaGetDeviceCount");
  }
  std::vector<adapter_info> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto a = describe_adapter(i);
    if (!a) return std::move(a).error();
    out.push_back(std::move(*a));
  }
  return out;
}

expected<std::unique_ptr<device>> device::open(std::uint32_t ordinal) {
  const std::string spec = "cuda:" + std::to_string(ordinal);
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    (void)cudaGetLastError();
    if (e == cudaErrorNoDevice)
      return make_cuda_error(e, "cuda: no CUDA device is visible", fix_for(e));
    if (category_of(e) == errc::unavailable)
      return make_cuda_error(e, "cuda: no usable driver", fix_for(e));
    return cuda_failure(e, spec, "cudaGetDeviceCount");
  }
  if (ordinal >= static_cast<std::uint32_t>(count))
    return make_error(errc::not_found,
                      spec + ": no such adapter; this process sees " + std::to_string(count) + " CUDA device" +
                          (count == 1 ? "" : "s"),
                      "use an ordinal below " + std::to_string(count) +
                          " (CUDA_VISIBLE_DEVICES renumbers the devices from 0), or list them with roster-info");
  auto wants_split = env_wants_split();
  if (!wants_split) return std::move(wants_split).error();

  auto info = describe_adapter(static_cast<int>(ordinal));
  if (!info) return std::move(info).error();
  std::unique_ptr<device> d(new device());
  d->info_ = std::move(*info);
  d->ordinal_ = static_cast<int>(ordinal);
  d->cooperative_ = d->info_.native_grid_sync;
  d->mode_ = d->cooperative_ && !*wants_split ? grid_sync_mode::native : grid_sync_mode::split;
  if (const char* v = std::getenv("ROSTER_CUDA_VARIANT")) detail::set_variant(std::atoi(v));

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

expected<void> device::dispatch_steps(std::span<const step> steps) {
  if (auto ok = activate(); !ok) return ok;
  return run(steps);
}

expected<std::chrono::nanoseconds> device::timed_dispatch_steps(std::span<const step> steps) {
  if (auto ok = activate(); !ok) return std::move(ok).error();
  auto stream = static_cast<cudaStream_t>(stream_);
  auto start = static_cast<cudaEvent_t>(event_start_), stop = static_cast<cudaEvent_t>(event_stop_);
  if (cudaError_t e = cudaEventRecord(start, stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "timed dispatch: cudaEventRecord");
  if (auto ok = run(steps); !ok) return std::move(ok).error();
  if (cudaError_t e = cudaEventRecord(stop, stream); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "timed dispatch: cudaEventRecord");
  if (cudaError_t e = cudaEventSynchronize(stop); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "timed dispatch: the program failed on the card (cudaEventSynchronize)");
  float ms = 0.0f;
  if (cudaError_t e = cudaEventElapsedTime(&ms, start, stop); e != cudaSuccess)
    return cuda_failure(e, info_.spec(), "timed dispatch: cudaEventElapsedTime");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(ms) * 1e6));
}

// Plans and launches validated steps. A segment is a run of steps over one
// length with no grid_sync inside; it ends at a grid_sync, a change of length,
// or just after a dot (whose result is written after a grid-wide sync). Up to
// max_launch_steps steps travel in one kprogram, so a long program becomes
// several launches, in order on the stream.
expected<void> device::run(std::span<const step> steps) {
  for (const auto& s : steps)
    if (s.op == op::call) return run_with_calls(steps);
  auto stream = static_cast<cudaStream_t>(stream_);
  bool f64 = true;
  for (const auto& s : steps)
    if (buffers_of(s.op) > 0) {
      f64 = s.out.type == element_type::f64;
      break;
    }
  auto launched = [&](cudaError_t e, std::string_view what, bool coop) -> expected<void> {
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return cuda_failure(e, info_.spec(), "dispatch: " + std::string(what));
    }
    (coop ? counts_.cooperative : counts_.plain) += 1;
    return {};
  };
  auto kstep_of = [&](const step& s) {
    kstep k{};
    k.out = slots_[s.out.slot].ptr;
    k.in1 = buffers_of(s.op) >= 2 ? slots_[s.in1.slot].ptr : nullptr;
    k.in2 = buffers_of(s.op) >= 3 ? slots_[s.in2.slot].ptr : nullptr;
    k.scalar = s.scalar;
    k.op = static_cast<std::uint8_t>(s.op);  // kop shares roster::op's order
    return k;
  };

  // The fast path: a program of one step runs its own specialised kernel.
  std::size_t buffer_steps = 0;
  const step* only = nullptr;
  for (const auto& s : steps)
    if (s.op != op::grid_sync) ++buffer_steps, only = &s;
  if (buffer_steps == 1) {
    const kstep k = kstep_of(*only);
    const std::uint64_t n = length_of(*only);
    if (only->op != op::dot)
      return launched(detail::launch_stream(k, n, f64, detail::stream_grid(static_cast<detail::kop>(k.op), n, f64, grid_stream_[f64][k.op]), stream),
                      "an element-wise kernel", false);
    if (mode_ == grid_sync_mode::native)
      return launched(detail::launch_dot_coop(k, n, f64, partials_, fit(grid_dot_[f64], n, f64), stream),
                      "the cooperative dot kernel (cudaLaunchCooperativeKernel)", true);
    if (auto ok = launched(detail::launch_dot_split(k, n, f64, partials_, fit(grid_dot_[f64], n, f64), stream),
                           "the dot kernels", false);
        !ok)
      return ok;
    counts_.plain += 1;  // the final-sum kernel
    return {};
  }

  kprogram kp{};
  kp.partials = partials_;
  int nsteps = 0;
  bool open_segment = false;
  auto flush = [&]() -> expected<void> {
    if (kp.nsegments == 0) return {};
    bool any_dot = false;
    std::uint64_t longest = 0;
    for (int g = 0; g < kp.nsegments; ++g) {
      any_dot = any_dot || kp.segments[g].dot >= 0;
      longest = std::max(longest, kp.segments[g].n);
    }
    const int grid = fit(grid_program_[f64], longest, f64);
    expected<void> ok;
    if (mode_ == grid_sync_mode::native && (kp.nsegments > 1 || any_dot)) {
      ok = launched(detail::launch_program_coop(kp, f64, grid, stream),
                    "the cooperative program kernel (cudaLaunchCooperativeKernel)", true);
    } else {
      for (int g = 0; g < kp.nsegments && ok; ++g) {
        ok = launched(detail::launch_segment_split(kp, g, f64, grid, stream), "a program segment kernel", false);
        if (ok && kp.segments[g].dot >= 0) counts_.plain += 1;  // its final-sum kernel
      }
    }
    kp.nsegments = 0;
    nsteps = 0;
    open_segment = false;
    return ok;
  };
  for (const auto& s : steps) {
    if (s.op == op::grid_sync) {
      open_segment = false;
      continue;
    }
    const std::uint64_t n = length_of(s);
    if (nsteps == detail::max_launch_steps) {
      if (auto ok = flush(); !ok) return ok;
    }
    ksegment* cur = open_segment ? &kp.segments[kp.nsegments - 1] : nullptr;
    if (cur == nullptr || cur->n != n || cur->dot >= 0) {
      if (kp.nsegments == detail::max_launch_segments) {
        if (auto ok = flush(); !ok) return ok;
      }
      cur = &kp.segments[kp.nsegments++];
      *cur = ksegment{n, static_cast<std::uint16_t>(nsteps), 0, -1, 0};
      open_segment = true;
    }
    kp.steps[nsteps] = kstep_of(s);
    if (s.op == op::dot) cur->dot = static_cast<std::int16_t>(nsteps);
    ++nsteps;
    ++cur->count;
  }
  return flush();
}

}  // namespace roster::cuda

// Its built-in ops become kernel entries with no launcher of their own: a
// call of one runs in the program's one launch (device::dispatch maps it onto
// the built-in step).
ROSTER_REGISTER_BACKEND(roster::cuda::backend);
ROSTER_DEFINE_BACKEND_ANCHOR(cuda);

namespace roster::cuda {

// A program with user kernels: the built-in runs between calls take the
// path above (one launch where they can), each call its launcher; all on
// the device's stream, so they run in program order.
expected<void> device::run_with_calls(std::span<const step> steps) {
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= steps.size(); ++i) {
    if (i < steps.size() && steps[i].op != op::call) continue;
    bool work = false;
    for (std::size_t k = begin; k < i; ++k) work = work || steps[k].op != op::grid_sync;
    if (work)
      if (auto ok = run(steps.subspan(begin, i - begin)); !ok) return ok;
    if (i < steps.size())
      if (auto ok = run_call(*steps[i].call); !ok) return ok;
    begin = i + 1;
  }
  return {};
}

// Calls a user kernel's host launcher on the device's stream with the
// buffers' device pointers, then checks the launch.
expected<void> device::run_call(const kernel_call& c) {
  auto entry = kernel_for(c);  // the named variant, the recorded winner, or the default
  if (!entry) return std::move(entry).error().prepend(info_.spec() + ": dispatch");
  // A built-in entry (a call device::dispatch did not map, e.g. of another
  // element type than the program's built-in steps): its built-in step.
  if (const step b = builtin_step(**entry, c); b.op != op::call) return run(std::span<const step>(&b, 1));
  const launcher* k = (*entry)->payload_as<launcher>();
  if (k == nullptr || k->fn == nullptr)
    return make_error(errc::internal,
                      info_.spec() + ": dispatch: the cuda kernel '" + c.op + "' (variant '" +
                          std::string((*entry)->variant) + "') has no launcher",
                      "register it with roster::cuda::kernel, which sets the launcher");
  // The program was validated (check_call) before it got here: no second
  // check, and no allocation for a call of up to 16 buffers and scalars.
  call_arguments arguments;
  auto args = arguments.build(**entry, c, [&](const buffer& b) { return slots_[b.slot].ptr; });
  if (!args) return std::move(args).error().prepend(info_.spec() + ": dispatch");
  (void)cudaGetLastError();  // an earlier, already reported error is not this call's
  k->fn(*args, stream_);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    const std::string what = info_.spec() + ": dispatch: the launcher of kernel '" + c.op + "' (variant '" +
                             std::string((*entry)->variant) + "')";
    // A launch the runtime refused (grid or block too large, too many
    // resources) leaves the context usable: say so, not "restart".
    switch (e) {
      case cudaErrorInvalidConfiguration:
      case cudaErrorInvalidValue:
      case cudaErrorLaunchOutOfResources:
        return make_cuda_error(static_cast<int>(e), what,
                               "the runtime refused the launch: check the launcher's grid and block sizes and "
                               "its shared memory against the card's limits (cudaGetDeviceProperties: "
                               "maxThreadsPerBlock, maxGridSize, sharedMemPerBlock); the device stays usable");
      default:
        return cuda_failure(e, info_.spec(), what.substr(info_.spec().size() + 2));
    }
  }
  counts_.plain += 1;
  return {};
}

}  // namespace roster::cuda
