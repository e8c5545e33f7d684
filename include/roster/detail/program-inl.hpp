#pragma once
// Private: program validation and splitting.

#include <roster/program.hpp>
#include <roster/kernels.hpp>

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
    const buffer* bufs[3] = {&s.out, &s.in1, &s.in2};
    static constexpr const char* roles[3] = {"output", "first input", "second input"};
    for (int b = 0; b < nb; ++b) {
      if (bufs[b]->owner == 0)
        return make_error(errc::invalid_argument,
                          detail::step_where(i, s) + ": its " + roles[b] + " buffer was never allocated",
                          "allocate every buffer with device.allocate<T>(n) before naming it in a program");
      if (bufs[b]->owner != s.out.owner)
        return make_error(errc::invalid_argument,
                          detail::step_where(i, s) + ": buffers come from different devices",
                          "allocate every buffer of a program on the device that dispatches it");
      if (!have_type) {
        type = bufs[b]->type;
        have_type = true;
      } else if (bufs[b]->type != type) {
        return make_error(errc::invalid_argument,
                          detail::step_where(i, s) + ": mixes float and double buffers",
                          "use buffers of one element type in the whole program");
      }
    }
    if (s.op == op::dot) {
      if (s.out.size < 1)
        return make_error(errc::invalid_argument, detail::step_where(i, s) + ": the result buffer is empty",
                          "allocate the dot result buffer with at least one element");
      if (s.in1.size != s.in2.size)
        return make_error(errc::invalid_argument,
                          detail::step_where(i, s) + ": input lengths disagree (" + std::to_string(s.in1.size) +
                              " and " + std::to_string(s.in2.size) + ")",
                          "give both dot inputs the same number of elements");
    } else {
      for (int b = 1; b < nb; ++b)
        if (bufs[b]->size != s.out.size)
          return make_error(errc::invalid_argument,
                            detail::step_where(i, s) + ": buffer lengths disagree (" +
                                std::to_string(s.out.size) + " and " + std::to_string(bufs[b]->size) + ")",
                            "give every buffer of an element-wise step the same number of elements");
    }
    if (s.op == op::fill || s.op == op::mul || s.op == op::triad || s.op == op::nstream) {
      if (!std::isfinite(s.scalar))
        return make_error(errc::invalid_argument, detail::step_where(i, s) + ": the scalar is not finite",
                          "pass a finite scalar (not NaN or infinity)");
      if (type == element_type::f32 && std::fabs(s.scalar) > 3.4028234663852886e38)
        return make_error(errc::invalid_argument,
                          detail::step_where(i, s) + ": the scalar does not fit in a float",
                          "pass a scalar within the float range, or use double buffers");
    }
  }
  if (!any_buffer)
    return make_error(errc::invalid_argument, "program: the program holds only grid_sync steps",
                      "add at least one step that works on a buffer");
  return {};
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
