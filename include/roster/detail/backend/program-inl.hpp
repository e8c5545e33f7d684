#pragma once
// Private: program validation and splitting.

#include <roster/program.hpp>

#include <atomic>
#include <cmath>
#include <string>

namespace roster {

// Out of line, as the library's other bodies are: a file that includes
// <roster/program.hpp> instantiates no std::vector growth (bench/compile_cost).
ROSTER_INLINE program& program::push(const step& s) {
  steps_.push_back(s);
  return *this;
}

// Out of line too: each std::span it makes costs a file that includes
// <roster/program.hpp> the constructor's constraint checks (bench/compile_cost).
ROSTER_INLINE program& program::call(std::string_view op, std::initializer_list<buffer> buffers,
                                     std::initializer_list<scalar_arg> scalars, call_options options) {
  return call(op, std::span<const buffer>(buffers.begin(), buffers.size()),
              std::span<const scalar_arg>(scalars.begin(), scalars.size()), options);
}

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

ROSTER_INLINE std::string program_shape(std::span<const step> steps) {
  std::string out;
  bool after_sync = true;
  for (const auto& s : steps) {
    if (s.op == op::grid_sync) {
      out += '|';
      after_sync = true;
      continue;
    }
    if (!after_sync) out += ',';
    after_sync = false;
    out += s.op == op::call ? std::string_view(s.call->op) : to_string(s.op);
  }
  return out;
}

ROSTER_INLINE bool has_shape(std::span<const step> steps, std::string_view shape) noexcept {
  // program_shape(steps) == shape, compared piece by piece: a dispatch asks this.
  std::size_t at = 0;
  bool after_sync = true;
  auto take = [&](std::string_view piece) {
    if (shape.substr(at, piece.size()) != piece) return false;
    at += piece.size();
    return true;
  };
  for (const auto& s : steps) {
    if (s.op == op::grid_sync) {
      if (!take("|")) return false;
      after_sync = true;
      continue;
    }
    if (!after_sync && !take(",")) return false;
    after_sync = false;
    if (!take(s.op == op::call ? std::string_view(s.call->op) : to_string(s.op))) return false;
  }
  return at == shape.size();
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
