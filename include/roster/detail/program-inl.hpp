#pragma once
// Private: program validation and splitting.

#include <roster/program.hpp>
#include <roster/kernels.hpp>

#include <atomic>
#include <cmath>
#include <string>

namespace roster {

ROSTER_INLINE element_type program::type() const noexcept {
  for (const auto& s : steps_)
    if (buffers_of(s.op) > 0 || s.op == op::call) return s.out.type;
  return element_type::f64;
}

ROSTER_INLINE program& program::call(std::string_view op, std::span<const buffer> buffers,
                                     std::span<const scalar_arg> scalars, call_options options) {
  // A barrier is a step of its own: call("grid_sync") is grid_sync().
  if (builtin_op(op) == op::grid_sync && buffers.empty() && scalars.empty() &&
      (options.variant.empty() || options.variant == builtin_variant))
    return grid_sync();
  auto c = std::make_shared<kernel_call>();
  c->op = std::string(op);
  c->variant = std::string(options.variant);
  c->buffers.assign(buffers.begin(), buffers.end());
  c->scalars.assign(scalars.begin(), scalars.end());
  c->extent = options.extent;
  step s{};
  s.op = op::call;
  if (!buffers.empty()) s.out = buffers.front();
  s.call = c.get();
  calls_.push_back(std::move(c));
  return push(s);
}

namespace detail {
inline std::string step_where(std::size_t i, const step& s) {
  return "program step " + std::to_string(i) + " (" + std::string(to_string(s.op)) + ")";
}

// The signature of each built-in op over float and double as signature_for
// finds it in the kernel inventory, looked up once per inventory snapshot:
// validating a built-in step costs an index, not a search. A snapshot is
// replaced only when a module is loaded or unloaded; the tables built from
// older ones stay reachable from the newest (never freed, like snapshots).
struct builtin_signature_table {
  const kernel_entry* const* from = nullptr;
  const builtin_signature_table* older = nullptr;
  std::span<const kernel_param> sig[op_count][2];
};
inline const builtin_signature_table& builtin_signatures_now() {
  static constinit std::atomic<const builtin_signature_table*> current{nullptr};
  const auto all = inventory<kernel_entry>();
  const builtin_signature_table* table = current.load(std::memory_order_acquire);
  if (table == nullptr || table->from != all.data()) [[unlikely]] {
    auto* fresh = new builtin_signature_table{all.data(), table, {}};
    for (std::size_t k = 0; k < op_count; ++k) {
      fresh->sig[k][0] = signature_for(to_string(static_cast<op>(k)), element_type::f32);
      fresh->sig[k][1] = signature_for(to_string(static_cast<op>(k)), element_type::f64);
    }
    // A thread that lost the race keeps its table reachable through `older`.
    while (!current.compare_exchange_weak(table, fresh, std::memory_order_acq_rel)) fresh->older = table;
    table = fresh;
  }
  return *table;
}
}  // namespace detail

ROSTER_INLINE expected<void> validate(std::span<const step> steps) {
  if (steps.empty())
    return make_error(errc::invalid_argument, "program: the program has no steps",
                      "add at least one step, e.g. p.fill(a, 1.0), before dispatching");
  if (steps.size() > max_program_steps)
    return make_error(errc::invalid_argument,
                      "program: " + std::to_string(steps.size()) + " steps is more than the limit of " +
                          std::to_string(max_program_steps),
                      "split the work into several programs of at most " +
                          std::to_string(max_program_steps) + " steps");
  bool have_type = false, any_buffer = false;
  element_type type = element_type::f64;
  const detail::builtin_signature_table* signatures = nullptr;  // fetched at the first built-in step
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const step& s = steps[i];
    if (s.op == op::call) {
      if (s.call == nullptr)
        return make_error(errc::invalid_argument, "program step " + std::to_string(i) + ": a call step without its call",
                          "append calls with program::call, not with push");
      if (auto ok = check_call(*s.call); !ok)
        return std::move(ok).error().prepend("program step " + std::to_string(i));
      any_buffer = true;
      continue;
    }
    if (static_cast<std::size_t>(s.op) >= op_count)
      return make_error(errc::invalid_argument,
                        "program step " + std::to_string(i) + ": unknown op code " +
                            std::to_string(static_cast<int>(s.op)),
                        "build steps with the program member functions (fill, copy, mul, add, triad, "
                        "nstream, dot, grid_sync)");
    const int nb = buffers_of(s.op);
    if (nb == 0) continue;
    any_buffer = true;
    // The step's arguments against its op's signature from the kernel
    // inventory: the check (and the errors) of a user kernel's call.
    const buffer bufs[3] = {s.out, s.in1, s.in2};
    const scalar_arg scalar(s.scalar);
    const bool has_scalar = s.op == op::fill || s.op == op::mul || s.op == op::triad || s.op == op::nstream;
    if (signatures == nullptr) signatures = &detail::builtin_signatures_now();
    const auto sig = signatures->sig[static_cast<std::size_t>(s.op)][s.out.type == element_type::f32 ? 0 : 1];
    if (auto ok = check_arguments(to_string(s.op), sig, std::span<const buffer>(bufs, static_cast<std::size_t>(nb)),
                                  std::span<const scalar_arg>(&scalar, has_scalar ? 1 : 0));
        !ok)
      return std::move(ok).error().prepend("program step " + std::to_string(i));
    if (!have_type) {
      type = s.out.type;
      have_type = true;
    } else if (s.out.type != type) {
      return make_error(errc::invalid_argument, detail::step_where(i, s) + ": mixes float and double buffers",
                        "use buffers of one element type in the whole program");
    }
  }
  if (!any_buffer)
    return make_error(errc::invalid_argument, "program: the program holds only grid_sync steps",
                      "add at least one step that works on a buffer");
  return {};
}

ROSTER_INLINE expected<void> validate(const program& p) {
  const void* token = &detail::builtin_signatures_now();  // a new one whenever the inventory changes
  const std::size_t n = p.steps().size();
  if (n != 0 && p.validated_.steps.load(std::memory_order_acquire) == n &&
      p.validated_.token.load(std::memory_order_acquire) == token)
    return {};
  auto ok = validate(p.steps());
  if (ok) {
    p.validated_.token.store(token, std::memory_order_release);
    p.validated_.steps.store(n, std::memory_order_release);
  }
  return ok;
}

ROSTER_INLINE std::vector<std::span<const step>> split_at_grid_sync(std::span<const step> steps) {
  std::vector<std::span<const step>> pieces;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= steps.size(); ++i) {
    if (i == steps.size() || steps[i].op == op::grid_sync) {
      if (i > begin) pieces.push_back(steps.subspan(begin, i - begin));
      begin = i + 1;
    }
  }
  return pieces;
}

ROSTER_INLINE std::size_t bytes_moved(const step& s) noexcept {
  const std::size_t e = size_of(s.out.type);
  switch (s.op) {
    case op::fill: return s.out.size * e;
    case op::copy: case op::mul: return 2 * s.out.size * e;
    case op::add: case op::triad: return 3 * s.out.size * e;
    case op::nstream: return 4 * s.out.size * e;
    case op::dot: return 2 * s.in1.size * e;
    case op::grid_sync: return 0;
    case op::call: {
      std::size_t bytes = 0;
      if (s.call == nullptr) return 0;
      for (const auto& b : s.call->buffers) bytes += b.size * size_of(b.type);
      return bytes;
    }
  }
  return 0;
}

}  // namespace roster
