#pragma once
// Private: the CPU device's dispatch: a program's steps planned into
// segments (runs of steps between grid_syncs), each one fused pass over
// memory on the pool, dot partials summed in thread order, and users'
// kernels run on the pool in program order.

#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/kernels.hpp>

#include <algorithm>
#include <new>
#include <vector>

namespace roster::cpu {

namespace detail {

// One resolved step of a segment.
template <class T>
struct cpu_step {
  op kind;
  T* out;
  const T* in1;
  const T* in2;
  T scalar;
  std::size_t n;        // elements the step covers (the inputs' length for dot)
  std::size_t partial;  // dot: index of its partial sums
};

// The plain (cached) loop of one step over [lo, lo + n).
template <class T>
ROSTER_CPU_LOOP void cpu_run_plain(const cpu_step<T>& s, std::size_t lo, std::size_t n, double* partials,
                                   std::size_t stride, unsigned t) noexcept {
  switch (s.kind) {
    case op::fill: cpu_fill(s.out + lo, s.scalar, n); break;
    case op::copy: cpu_copy(s.out + lo, s.in1 + lo, n); break;
    case op::mul: cpu_mul(s.out + lo, s.in1 + lo, s.scalar, n); break;
    case op::add: cpu_add(s.out + lo, s.in1 + lo, s.in2 + lo, n); break;
    case op::triad: cpu_triad(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); break;
    case op::nstream: cpu_nstream(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); break;
    case op::dot: partials[s.partial * stride + t] += cpu_dot(s.in1 + lo, s.in2 + lo, n); break;
    case op::grid_sync: case op::call: break;  // never in a fused plan
  }
}

// The same loops compiled for AVX2 (see cpu_has_wide_clone).
template <class T>
ROSTER_CPU_WIDE void cpu_run_plain_wide(const cpu_step<T>& s, std::size_t lo, std::size_t n, double* partials,
                                        std::size_t stride, unsigned t) noexcept {
  cpu_run_plain(s, lo, n, partials, stride, t);
}

template <class T>
inline void cpu_run_step(const cpu_step<T>& s, std::size_t lo, std::size_t hi, double* partials,
                         std::size_t stride, unsigned t, bool streaming = false, bool wide = false) noexcept {
  if (hi > s.n) hi = s.n;
  if (lo >= hi) return;
  const std::size_t n = hi - lo;
  if (streaming) {
    // The AVX2 copy's 32-byte streaming stores where the plain loops run the
    // AVX2 copy too (or the build targets AVX2).
    if ((wide || !cpu_has_wide_clone) &&
        cpu_stream_wide(s.kind, s.out + lo, s.in1 != nullptr ? s.in1 + lo : nullptr,
                        s.in2 != nullptr ? s.in2 + lo : nullptr, s.scalar, n))
      return;
    switch (s.kind) {
      case op::fill: cpu_fill_stream(s.out + lo, s.scalar, n); return;
      case op::copy: cpu_copy_stream(s.out + lo, s.in1 + lo, n); return;
      case op::mul: cpu_mul_stream(s.out + lo, s.in1 + lo, s.scalar, n); return;
      case op::add: cpu_add_stream(s.out + lo, s.in1 + lo, s.in2 + lo, n); return;
      case op::triad: cpu_triad_stream(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); return;
      default: break;  // nstream reads its output; dot stores one value
    }
  }
  if (wide) cpu_run_plain_wide(s, lo, n, partials, stride, t);
  else cpu_run_plain(s, lo, n, partials, stride, t);
}

template <class T>
struct cpu_segment {
  std::size_t first = 0, count = 0;  // range in the plan's steps
  std::size_t length = 0;            // longest step
  std::size_t dots = 0;              // dot steps in it
  bool streaming = false;            // one step over arrays larger than the cache: bypass it
};

template <class T>
struct cpu_plan {
  std::vector<cpu_step<T>> steps;
  std::vector<cpu_segment<T>> segments;
  double* partials = nullptr;
  std::size_t stride = 0;  // doubles between two dot steps' partials (threads, padded)
  detail::cpu_barrier* barrier = nullptr;
  unsigned threads = 1;
  bool wide = false;  // run the AVX2 copy of the plain loops

  void operator()(unsigned t) noexcept {
    for (std::size_t g = 0; g < segments.size(); ++g) {
      const auto& seg = segments[g];
      const std::size_t blocks = (seg.length + cpu::block_elements - 1) / cpu::block_elements;
      const std::size_t b0 = cpu_block_begin(blocks, t, threads), b1 = cpu_block_begin(blocks, t + 1, threads);
      const cpu_step<T>* first = steps.data() + seg.first;
      if (seg.count == 1) {
        // One step: the thread's whole range in one call.
        cpu_run_step(*first, b0 * cpu::block_elements, b1 * cpu::block_elements, partials, stride, t,
                     seg.streaming, wide);
        if (seg.streaming) cpu_stream_fence();  // streaming stores are visible before the barrier
      } else {
        // Fused: each block goes through every step while it is in cache.
        for (std::size_t b = b0; b < b1; ++b)
          for (std::size_t k = 0; k < seg.count; ++k)
            cpu_run_step(first[k], b * cpu::block_elements, (b + 1) * cpu::block_elements, partials, stride, t,
                         false, wide);
      }
      if (seg.dots > 0) {
        barrier->arrive_and_wait();
        if (t == 0) finish_dots(seg);
      }
      if (g + 1 < segments.size()) barrier->arrive_and_wait();
    }
  }

  // Final sum of each dot's per-thread partials, in thread order.
  void finish_dots(const cpu_segment<T>& seg) noexcept {
    for (std::size_t k = seg.first; k < seg.first + seg.count; ++k) {
      const auto& s = steps[k];
      if (s.kind != op::dot) continue;
      double sum = 0.0;
      for (unsigned i = 0; i < threads; ++i) sum += partials[s.partial * stride + i];
      s.out[0] = static_cast<T>(sum);
    }
  }
};

}  // namespace detail

template <class T>
expected<void> device::run(std::span<const step> steps) {
  detail::cpu_plan<T> plan;
  const unsigned threads = pool_.size();
  plan.threads = threads;
  plan.barrier = &pool_.barrier();
  plan.wide = wide_loops_;
  plan.steps.reserve(steps.size());
  std::size_t dots = 0;
  detail::cpu_segment<T> seg;
  auto close = [&] {
    if (seg.count > 0) plan.segments.push_back(seg);
    seg = {};
    seg.first = plan.steps.size();
  };
  for (const step& s : steps) {
    if (s.op == op::grid_sync) {
      close();
      continue;
    }
    detail::cpu_step<T> r{s.op, nullptr, nullptr, nullptr, static_cast<T>(s.scalar), s.out.size, 0};
    r.out = static_cast<T*>(data_of(s.out));
    if (buffers_of(s.op) > 1) r.in1 = static_cast<const T*>(data_of(s.in1));
    if (buffers_of(s.op) > 2) r.in2 = static_cast<const T*>(data_of(s.in2));
    if (r.out == nullptr || (buffers_of(s.op) > 1 && r.in1 == nullptr) || (buffers_of(s.op) > 2 && r.in2 == nullptr))
      return make_error(errc::invalid_argument, adapter_.spec() + ": dispatch: a step names a buffer that is not live on this device",
                        "dispatch through device::dispatch(program), which checks every buffer");
    if (s.op == op::dot) {
      r.n = s.in1.size;
      r.partial = dots++;
      ++seg.dots;
    }
    seg.length = std::max(seg.length, r.n);
    plan.steps.push_back(r);
    ++seg.count;
  }
  close();
  for (auto& g : plan.segments) {
    if (g.count != 1 || !detail::cpu_has_streaming) continue;
    const auto& st = plan.steps[g.first];
    const std::size_t arrays = st.kind == op::fill ? 1 : (st.kind == op::copy || st.kind == op::mul) ? 2 : 3;
    g.streaming = arrays * st.n * sizeof(T) > streaming_threshold_;
  }
  // Partials: one run of `threads` doubles per dot step, padded to a cache line.
  plan.stride = (threads + 7) / 8 * 8;
  partials_.assign(dots * plan.stride, 0.0);
  plan.partials = partials_.data();
  pool_.run_each(plan);
  return {};
}

ROSTER_INLINE expected<void> device::run_builtin(std::span<const step> steps) {
  for (const step& s : steps)
    if (buffers_of(s.op) > 0) return s.out.type == element_type::f32 ? run<float>(steps) : run<double>(steps);
  return {};
}

// A user kernel: each pool thread runs its contiguous part of [0, extent);
// the pool's run returns when every thread is done, which orders the call
// with the steps before and after it.
ROSTER_INLINE expected<void> device::run_call(const kernel_call& c) {
  auto entry = kernel_for(c);  // the named variant, the recorded winner, or the default
  if (!entry) return std::move(entry).error().prepend(adapter_.spec() + ": dispatch");
  // A built-in entry over its whole buffers: the fused path's loop for it.
  if (const step b = builtin_step(**entry, c); b.op != op::call) return run_builtin(std::span<const step>(&b, 1));
  const host_kernel* k = (*entry)->payload_as<host_kernel>();
  if (k == nullptr || k->fn == nullptr)
    return make_error(errc::internal,
                      adapter_.spec() + ": dispatch: the cpu kernel '" + c.op + "' (variant '" +
                          std::string((*entry)->variant) + "') has no host entry point",
                      "register it with roster::cpu::kernel or ROSTER_CPU_KERNEL, which set the function");
  call_arguments arguments;  // no allocation for a call of up to 16 buffers and 16 scalars
  auto args = arguments.build(**entry, c, [&](const buffer& b) { return data_of(b); });
  if (!args) return std::move(args).error().prepend(adapter_.spec() + ": dispatch");
  const host_kernel_fn fn = k->fn;
  const std::size_t n = args->extent;
  const unsigned threads = pool_.size();
  auto part = [&](unsigned t) noexcept {
    const std::size_t lo = detail::cpu_block_begin(n, t, threads), hi = detail::cpu_block_begin(n, t + 1, threads);
    if (lo < hi) fn(*args, lo, hi);
  };
  pool_.run_each(part);
  return {};
}

ROSTER_INLINE expected<void> device::dispatch_steps(std::span<const step> steps) {
  if (steps.empty()) return {};
  std::lock_guard lock(mutex_);
  try {
    std::size_t first_call = 0;
    while (first_call < steps.size() && steps[first_call].op != op::call) ++first_call;
    if (first_call == steps.size()) return run_builtin(steps);  // no user kernel: the fused path as it was
    // Built-in runs between calls go through the fused path; each call runs
    // on the pool alone. Each part completes before the next starts.
    std::size_t begin = 0;
    for (std::size_t i = first_call; i <= steps.size(); ++i) {
      if (i < steps.size() && steps[i].op != op::call) continue;
      if (i > begin)
        if (auto ok = run_builtin(steps.subspan(begin, i - begin)); !ok) return ok;
      if (i < steps.size())
        if (auto ok = run_call(*steps[i].call); !ok) return ok;
      begin = i + 1;
    }
    return {};
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, adapter_.spec() + ": dispatch: no memory for the program's plan",
                      "free memory, or dispatch a shorter program");
  }
  return {};
}

}  // namespace roster::cpu
