#pragma once
// Running steps: the element-wise steps between grid syncs and calls become
// one pass (one kernel over every index, each step in program order on it),
// a dot closes its pass and adds the final sum, and a user's call runs in its
// place. Everything goes on the one in-order queue, which orders each kernel
// after the one before: that is the grid sync between pieces.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/device.hpp>

#include <algorithm>
#include <array>
#include <chrono>

namespace roster::opencl {

using namespace detail;

namespace detail {

// The pass's distinct buffers: index of a slot, added when new.
ROSTER_INLINE std::uint8_t index_of(std::vector<std::uint32_t>& slots, std::uint32_t slot) {
  auto it = std::find(slots.begin(), slots.end(), slot);
  if (it != slots.end()) return static_cast<std::uint8_t>(it - slots.begin());
  slots.push_back(slot);
  return static_cast<std::uint8_t>(slots.size() - 1);
}

// The buffers of a step that a pass kernel takes as parameters (a dot's
// result is written by the final sum, not by the pass).
ROSTER_INLINE int pass_buffers(const step& s, std::array<std::uint32_t, 3>& out) {
  if (s.op == op::dot) {
    out = {s.in1.slot, s.in2.slot, 0};
    return 2;
  }
  const int n = buffers_of(s.op);
  out = {s.out.slot, s.in1.slot, s.in2.slot};
  return n;
}

}  // namespace detail

ROSTER_INLINE expected<void> device::run(std::span<const step> steps, timing& t) {
  std::vector<const step*> pass;
  std::vector<std::uint32_t> slots;  // the pass's distinct buffers
  auto flush = [&]() -> expected<void> {
    if (pass.empty()) return {};
    auto ok = run_pass(pass, t);
    pass.clear();
    slots.clear();
    return ok;
  };
  for (const step& s : steps) {
    if (s.op == op::grid_sync || s.op == op::call) {
      if (auto ok = flush(); !ok) return ok;
      if (s.op == op::call)
        if (auto ok = run_call(*s.call, t); !ok) return ok;
      continue;
    }
    std::array<std::uint32_t, 3> mine{};
    const int n = pass_buffers(s, mine);
    std::size_t added = 0;
    for (int i = 0; i < n; ++i)
      added += std::find(slots.begin(), slots.end(), mine[i]) == slots.end() ? 1 : 0;
    // One element type per kernel, and a bounded parameter list.
    if (!pass.empty() && (pass.front()->out.type != s.out.type || pass.size() >= max_pass_steps ||
                          slots.size() + added > max_pass_buffers))
      if (auto ok = flush(); !ok) return ok;
    for (int i = 0; i < n; ++i) (void)index_of(slots, mine[i]);
    pass.push_back(&s);
    if (s.op == op::dot)  // its result is whole only after the final sum
      if (auto ok = flush(); !ok) return ok;
  }
  return flush();
}

ROSTER_INLINE expected<void> device::run_pass(std::span<const step* const> steps, timing& t) {
  const element_type type = steps.front()->out.type;
  if (type == element_type::f64 && !p_.info.f64)
    return make_error(errc::unsupported,
                      where("dispatch") + ": " + p_.info.name + " has no double support, so it runs no double program",
                      "use float buffers on this device, or pick an adapter whose f64 is true (roster-info)");
  pass_layout layout;
  layout.type = type;
  layout.width = vector_bytes_ == 0 ? 1 : vector_bytes_ / static_cast<unsigned>(size_of(type));
  std::vector<std::uint32_t> slots;
  std::size_t longest = 0;
  for (const step* s : steps) {
    pass_step ps;
    ps.o = s->op;
    std::array<std::uint32_t, 3> mine{};
    const int n = pass_buffers(*s, mine);
    std::uint8_t* places[3] = {&ps.out, &ps.in1, &ps.in2};
    if (s->op == op::dot) places[0] = &ps.in1, places[1] = &ps.in2;
    for (int i = 0; i < n; ++i) *places[i] = index_of(slots, mine[i]);
    layout.steps.push_back(ps);
    longest = std::max(longest, s->op == op::dot ? s->in1.size : s->out.size);
  }
  layout.buffers = static_cast<unsigned>(slots.size());
  // 32-bit indices while v + the global size cannot wrap.
  layout.wide = wide_index_ || longest >= (std::size_t{1} << 31);
  layout.runs = p_.info.type == device_type::cpu && steps.back()->op == op::dot;
  auto kernel = pass_kernel(layout);
  if (!kernel) return std::move(kernel).error();
  const cl_kernel k = *kernel;

  cl_uint arg = 0;
  auto set = [&](std::size_t size, const void* value) -> expected<void> {
    ROSTER_IMPL_CL_CALL(where("dispatch"), clSetKernelArg, k, arg, size, value);
    ++arg;
    return {};
  };
  auto set_index = [&](std::size_t v) {
    const cl_ulong wide = v;
    const cl_uint narrow = static_cast<cl_uint>(v);
    return layout.wide ? set(sizeof wide, &wide) : set(sizeof narrow, &narrow);
  };
  auto set_scalar = [&](double v) {
    const float f = static_cast<float>(v);
    return type == element_type::f64 ? set(sizeof v, &v) : set(sizeof f, &f);
  };
  for (std::uint32_t slot : slots)
    if (auto ok = set(sizeof(cl_mem), &buffers_.at(slot).mem); !ok) return ok;
  const std::size_t w = layout.width;
  const std::size_t vectors = (longest + w - 1) / w;
  if (auto ok = set_index(vectors); !ok) return ok;
  for (const step* s : steps) {
    if (auto ok = set_index(s->op == op::dot ? s->in1.size : s->out.size); !ok) return ok;
    if (has_scalar(s->op))
      if (auto ok = set_scalar(s->scalar); !ok) return ok;
  }
  const std::size_t groups_wanted = (vectors + local_ - 1) / local_;
  if (!layout.has_dot()) {
    // One work-item per vector (the loop inside covers a larger extent).
    const std::size_t groups = std::min<std::size_t>(groups_wanted, (std::size_t{1} << 31) / local_);
    return enqueue(k, groups * local_, local_, t, "dispatch");
  }
  if (auto ok = set(sizeof(cl_mem), &partials_); !ok) return ok;
  const std::size_t groups = std::min(groups_wanted, dot_groups_);
  if (auto ok = enqueue(k, groups * local_, local_, t, "dispatch"); !ok) return ok;

  auto final_sum = dot_final_kernel(type);
  if (!final_sum) return std::move(final_sum).error();
  const cl_uint count = static_cast<cl_uint>(groups);
  const cl_mem result = buffers_.at(steps.back()->out.slot).mem;
  ROSTER_IMPL_CL_CALL(where("dispatch"), clSetKernelArg, *final_sum, 0, sizeof(cl_mem), &result);
  ROSTER_IMPL_CL_CALL(where("dispatch"), clSetKernelArg, *final_sum, 1, sizeof(cl_mem), &partials_);
  ROSTER_IMPL_CL_CALL(where("dispatch"), clSetKernelArg, *final_sum, 2, sizeof count, &count);
  return enqueue(*final_sum, local_, local_, t, "dispatch");
}

// A user kernel's call: its parameters in signature order (a buffer's cl_mem,
// a scalar converted to the signature's type), then the extent as ulong, over
// the extent rounded up to the kernel's local size.
ROSTER_INLINE expected<void> device::run_call(const kernel_call& c, timing& t) {
  auto entry = kernel_for(c);  // the named variant, the recorded winner, or the default
  if (!entry) return std::move(entry).error().prepend(where("dispatch"));
  // A built-in entry the core did not lower (another element type than the
  // program's built-in steps): its own pass.
  if (const step b = builtin_step(**entry, c); b.op != op::call) {
    if (b.op == op::grid_sync) return {};
    const step* one[] = {&b};
    return run_pass(one, t);
  }
  auto u = user_kernel_for(**entry);
  if (!u) return std::move(u).error();
  call_arguments arguments;
  auto args = arguments.build(**entry, c, [&](const buffer& b) -> void* {
    auto it = buffers_.find(b.slot);
    return it == buffers_.end() ? nullptr : static_cast<void*>(it->second.mem);
  });
  if (!args) return std::move(args).error().prepend(where("dispatch"));
  if (args->extent == 0) return {};  // nothing to run (OpenCL refuses a global size of 0)
  const cl_kernel k = (*u)->built.kernel;
  const std::string what = "dispatch: kernel '" + c.op + "'";
  cl_uint arg = 0;
  std::size_t bi = 0, si = 0;
  for (const kernel_param& p : (*entry)->signature) {
    if (p.is_buffer) {
      const cl_mem mem = static_cast<cl_mem>(args->buffers[bi++].data);
      ROSTER_IMPL_CL_CALL(where(what), clSetKernelArg, k, arg++, sizeof mem, &mem);
      continue;
    }
    const scalar_arg& a = args->scalars[si++];
    const void* value = a.type == scalar_type::f64   ? static_cast<const void*>(&a.f64)
                        : a.type == scalar_type::f32 ? static_cast<const void*>(&a.f32)
                        : a.type == scalar_type::i32 ? static_cast<const void*>(&a.i32)
                                                     : static_cast<const void*>(&a.u32);
    ROSTER_IMPL_CL_CALL(where(what), clSetKernelArg, k, arg++, a.type == scalar_type::f64 ? 8 : 4, value);
  }
  const cl_ulong extent = args->extent;
  ROSTER_IMPL_CL_CALL(where(what), clSetKernelArg, k, arg, sizeof extent, &extent);
  const std::size_t local = (*u)->local;
  return enqueue(k, (args->extent + local - 1) / local * local, local, t, what);
}

ROSTER_INLINE expected<void> device::enqueue(cl_kernel k, std::size_t global, std::size_t local, timing& t, std::string_view what) {
  cl_event event = nullptr;
  ROSTER_IMPL_CL_CALL(where(what), clEnqueueNDRangeKernel, queue_, k, 1, nullptr, &global, &local, 0, nullptr,
                      t.on ? &event : nullptr);
  counters().kernels_enqueued.fetch_add(1, std::memory_order_relaxed);
  if (!t.on) return {};
  if (t.first == nullptr) {
    t.first = event;
  } else {
    if (t.last != nullptr) (void)fn().clReleaseEvent(t.last);
    t.last = event;
  }
  return {};
}

ROSTER_INLINE expected<void> device::dispatch_steps(std::span<const step> steps) {
  std::lock_guard lock(mutex_);
  timing t;
  auto ok = run(steps, t);
  // Submit what was enqueued (some drivers hold commands until a flush).
  (void)fn().clFlush(queue_);
  return ok;
}

// The device's own clock: from the first kernel's start to the last one's end.
ROSTER_INLINE expected<duration_ns> device::timed_dispatch_steps(std::span<const step> steps) {
  std::lock_guard lock(mutex_);
  ROSTER_IMPL_CL_CALL(where("timed dispatch"), clFinish, queue_);
  timing t;
  t.on = true;
  auto ok = run(steps, t);
  const cl_int finished = fn().clFinish(queue_);
  cl_ulong start = 0, end = 0;
  cl_int status = ok && finished == CL_SUCCESS ? CL_SUCCESS : finished;
  if (ok && status == CL_SUCCESS && t.first != nullptr) {
    status = fn().clGetEventProfilingInfo(t.first, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    if (status == CL_SUCCESS)
      status = fn().clGetEventProfilingInfo(t.last != nullptr ? t.last : t.first, CL_PROFILING_COMMAND_END,
                                            sizeof end, &end, nullptr);
  }
  if (t.first != nullptr) (void)fn().clReleaseEvent(t.first);
  if (t.last != nullptr) (void)fn().clReleaseEvent(t.last);
  if (!ok) return std::move(ok).error();
  if (status != CL_SUCCESS) return cl_failure(where("timed dispatch"), "clGetEventProfilingInfo", status);
  return std::chrono::nanoseconds(static_cast<std::int64_t>(end >= start ? end - start : 0));
}

}  // namespace roster::opencl
