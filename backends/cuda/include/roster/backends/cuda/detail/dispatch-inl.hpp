#pragma once
// Private: the CUDA device's dispatch: a program planned into segments and
// launched as one cooperative kernel where it can (split launches
// otherwise), the single-step fast path, timed dispatch with events, and
// users' kernels through their launchers, all in order on the device's stream.

#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/errors.hpp>
#include <roster/backends/cuda/detail/module.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace roster::cuda {

namespace detail::planning {

// The elements a step walks: a dot's inputs, otherwise its output.
inline std::uint64_t length_of(const step& s) noexcept { return s.op == op::dot ? s.in1.size : s.out.size; }

// A grid no larger than n elements need (one 16-byte vector per thread), so a
// small program does not start hundreds of idle blocks.
inline int fit(int full, std::uint64_t n, bool f64) noexcept {
  const std::uint64_t per_block = std::uint64_t{detail::block_threads} * (f64 ? 2 : 4);
  const std::uint64_t need = (n + per_block - 1) / per_block;
  return need < static_cast<std::uint64_t>(full) ? static_cast<int>(std::max<std::uint64_t>(need, 1)) : full;
}

// One step as a kernel sees it: device pointers by `pointer_of(buffer)`.
template <class PointerOf>
kstep kstep_from(const step& s, PointerOf&& pointer_of) {
  kstep k{};
  k.out = pointer_of(s.out);
  k.in1 = buffers_of(s.op) >= 2 ? pointer_of(s.in1) : nullptr;
  k.in2 = buffers_of(s.op) >= 3 ? pointer_of(s.in2) : nullptr;
  k.scalar = s.scalar;
  k.op = static_cast<std::uint8_t>(s.op);  // kop shares roster::op's order
  return k;
}

}  // namespace detail::planning

// Checks a launch's CUresult and counts it.
ROSTER_INLINE expected<void> device::launched(int error, std::string_view what, bool cooperative) {
  if (error != detail::cu_success) return detail::cuda_failure(error, info_.spec(), "dispatch: " + std::string(what));
  (cooperative ? counts_.cooperative : counts_.plain) += 1;
  return {};
}

// A program of one step: its own specialised kernel, or for a dot one
// cooperative launch (two plain ones in split mode).
ROSTER_INLINE expected<void> device::run_single(const step& only, bool f64) {
  using namespace detail::planning;
  auto stream = static_cast<detail::cu_stream>(stream_);
  const detail::kernel_set& ks = *kernels_;
  const detail::kstep k = kstep_from(only, [&](const buffer& b) { return slots_[b.slot].ptr; });
  const std::uint64_t n = length_of(only);
  if (only.op != op::dot) {
    const int grid = detail::stream_grid(k.op, n, f64, grid_stream_[f64][k.op], ks.variant);
    return launched(detail::launch_stream(ks, k, n, f64, grid, stream), "an element-wise kernel", false);
  }
  if (mode_ == grid_sync_mode::native)
    return launched(detail::launch_dot_coop(ks, k, n, f64, partials_, fit(grid_dot_[f64], n, f64), stream),
                    "the cooperative dot kernel (cuLaunchCooperativeKernel)", true);
  if (auto ok = launched(detail::launch_dot_split(ks, k, n, f64, partials_, fit(grid_dot_[f64], n, f64), stream),
                         "the dot kernels", false);
      !ok)
    return ok;
  counts_.plain += 1;  // the final-sum kernel
  return {};
}

ROSTER_INLINE expected<void> device::dispatch_steps(std::span<const step> steps) {
  if (auto ok = activate(); !ok) return ok;
  if (auto ok = ready(); !ok) return ok;
  return run(steps);
}

ROSTER_INLINE expected<duration_ns> device::timed_dispatch_steps(std::span<const step> steps) {
  if (auto ok = activate(); !ok) return std::move(ok).error();
  if (auto ok = ready(); !ok) return std::move(ok).error();  // the module's load is not the program's time
  const detail::driver_api& cu = detail::api();
  auto stream = static_cast<detail::cu_stream>(stream_);
  auto start = static_cast<detail::cu_event>(event_start_), stop = static_cast<detail::cu_event>(event_stop_);
  if (int e = cu.cuEventRecord(start, stream); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "timed dispatch: cuEventRecord");
  if (auto ok = run(steps); !ok) return std::move(ok).error();
  if (int e = cu.cuEventRecord(stop, stream); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "timed dispatch: cuEventRecord");
  if (int e = cu.cuEventSynchronize(stop); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "timed dispatch: the program failed on the card (cuEventSynchronize)");
  float ms = 0.0f;
  if (int e = cu.cuEventElapsedTime(&ms, start, stop); e != detail::cu_success)
    return detail::cuda_failure(e, info_.spec(), "timed dispatch: cuEventElapsedTime");
  return std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(ms) * 1e6));
}

// Plans and launches validated steps. A segment is a run of steps over one
// length with no grid_sync inside; it ends at a grid_sync, a change of length,
// or just after a dot (whose result is written after a grid-wide sync). Up to
// max_launch_steps steps travel in one kprogram, so a long program becomes
// several launches, in order on the stream.
ROSTER_INLINE expected<void> device::run(std::span<const step> steps) {
  using namespace detail::planning;
  using detail::kprogram;
  using detail::ksegment;
  for (const auto& s : steps)
    if (s.op == op::call) return run_with_calls(steps);
  auto stream = static_cast<detail::cu_stream>(stream_);
  const detail::kernel_set& ks = *kernels_;
  bool f64 = true;
  for (const auto& s : steps)
    if (buffers_of(s.op) > 0) {
      f64 = s.out.type == element_type::f64;
      break;
    }
  auto kstep_of = [&](const step& s) { return kstep_from(s, [&](const buffer& b) { return slots_[b.slot].ptr; }); };

  // The fast path: a program of one step runs its own specialised kernel.
  std::size_t buffer_steps = 0;
  const step* only = nullptr;
  for (const auto& s : steps)
    if (s.op != op::grid_sync) ++buffer_steps, only = &s;
  if (buffer_steps == 1) return run_single(*only, f64);

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
      ok = launched(detail::launch_program_coop(ks, kp, f64, grid, stream),
                    "the cooperative program kernel (cuLaunchCooperativeKernel)", true);
    } else {
      for (int g = 0; g < kp.nsegments && ok; ++g) {
        ok = launched(detail::launch_segment_split(ks, kp, g, f64, grid, stream), "a program segment kernel", false);
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


// A program with user kernels: the built-in runs between calls take the
// path above (one launch where they can), each call its launcher; all on
// the device's stream, so they run in program order.
ROSTER_INLINE expected<void> device::run_with_calls(std::span<const step> steps) {
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

namespace detail {

// The CUDA runtime's error of a user's launch. A launcher is compiled by
// nvcc and launches through the runtime, which keeps the launch's error per
// thread (cudaGetLastError); roster links no runtime and finds its entry
// points in the process (the shared libcudart the program links, or a static
// one exported with -rdynamic). Without them a refused launch shows at the
// next synchronisation instead.
struct runtime_errors {
  int (*get_last)() = nullptr;                // cudaGetLastError
  const char* (*name_of)(int) = nullptr;       // cudaGetErrorName
  const char* (*text_of)(int) = nullptr;       // cudaGetErrorString
};

inline const runtime_errors& runtime() {
  static const runtime_errors r = [] {
    runtime_errors x;
    x.get_last = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "cudaGetLastError"));
    x.name_of = reinterpret_cast<const char* (*)(int)>(::dlsym(RTLD_DEFAULT, "cudaGetErrorName"));
    x.text_of = reinterpret_cast<const char* (*)(int)>(::dlsym(RTLD_DEFAULT, "cudaGetErrorString"));
    return x;
  }();
  return r;
}

}  // namespace detail

// Calls a user kernel's host launcher on the device's stream with the
// buffers' device pointers, then checks the launch.
ROSTER_INLINE expected<void> device::run_call(const kernel_call& c) {
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
  const detail::runtime_errors& rt = detail::runtime();
  if (rt.get_last != nullptr) (void)rt.get_last();  // an earlier, already reported error is not this call's
  k->fn(*args, stream_);
  const int e = rt.get_last != nullptr ? rt.get_last() : 0;
  if (e != 0) {
    const char* name = rt.name_of != nullptr ? rt.name_of(e) : nullptr;
    const char* text = rt.text_of != nullptr ? rt.text_of(e) : nullptr;
    const std::string what = info_.spec() + ": dispatch: the launcher of kernel '" + c.op + "' (variant '" +
                             std::string((*entry)->variant) + "'): " + (text != nullptr ? text : "launch failed") +
                             " (" + (name != nullptr ? name : "cudaError_t") + ", " + std::to_string(e) + ")";
    // A launch the runtime refused (cudaErrorInvalidValue 1, cudaErrorLaunchOutOfResources 7,
    // cudaErrorInvalidConfiguration 9) leaves the context usable: say so, not "restart".
    if (e == 1 || e == 7 || e == 9)
      return make_error(errc::device_fault, what,
                        "the runtime refused the launch: check the launcher's grid and block sizes and its shared "
                        "memory against the card's limits (cudaGetDeviceProperties: maxThreadsPerBlock, "
                        "maxGridSize, sharedMemPerBlock); the device stays usable");
    return make_error(errc::device_fault, what,
                      "a kernel or the card faulted and the CUDA context is unusable: restart the process; run it "
                      "under compute-sanitizer to find the cause, " + std::string(detail::exclude_fix));
  }
  counts_.plain += 1;
  return {};
}

}  // namespace roster::cuda
