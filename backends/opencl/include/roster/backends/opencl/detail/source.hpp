#pragma once
// Private: the OpenCL C the backend generates for its built-in ops. A pass is
// the element-wise steps between two grid syncs (or calls), and at most one
// dot after them: one kernel runs every step of the pass on each index in
// program order, so the data is read and written once for the whole pass, and
// the dot's per-group partial sums come out of the same kernel. A second,
// fixed kernel sums the partials into r[0].

#include <roster/program.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roster::opencl::detail {

/// One step of a pass as its kernel sees it: the op and its buffers as
/// indices into the pass's distinct buffers (the kernel's first parameters).
struct pass_step {
  op o = op::fill;
  std::uint8_t out = 0, in1 = 0, in2 = 0;
};

/// What a pass kernel's source depends on; passes of one layout share it.
struct pass_layout {
  element_type type = element_type::f32;
  unsigned width = 1;    ///< elements one work-item moves per step: 1, or a 16-byte vector
  bool wide = false;     ///< 64-bit indices (a step longer than 2^31 elements)
  bool runs = false;     ///< each work-item takes a run of adjacent vectors (CPU devices), not every
                         ///< global-size-th one (GPUs, where neighbouring work-items load together)
  unsigned buffers = 0;  ///< distinct buffers
  std::vector<pass_step> steps;  ///< element-wise, then at most one dot, last
  /// Returns a short text naming the layout, the key of the kernel cache.
  [[nodiscard]] std::string key() const;
  /// Returns whether the last step is a dot.
  [[nodiscard]] bool has_dot() const noexcept { return !steps.empty() && steps.back().o == op::dot; }
};

/// The name of every generated pass kernel.
inline constexpr const char* pass_kernel_name = "roster_pass";
/// The name of the dot's final-sum kernel.
inline constexpr const char* dot_final_name = "roster_dot_final";

/// Returns the OpenCL C of a pass kernel for work-groups of `local` items.
/// Parameters: the distinct buffers; the vector count nv (uint, or ulong when
/// wide); per step its length n (same type) and, for fill, mul, triad and
/// nstream, its scalar (float or double); with a dot, the partial sums (one
/// per work-group).
std::string pass_source(const pass_layout& layout, std::size_t local);

/// Returns the OpenCL C of the final sum of a dot: (global T* r, global const
/// T* partial, uint count), run by one work-group of `local` items.
std::string dot_final_source(element_type type, std::size_t local);

/// Returns whether op o takes a scalar (fill, mul, triad, nstream).
constexpr bool has_scalar(op o) noexcept {
  return o == op::fill || o == op::mul || o == op::triad || o == op::nstream;
}

}  // namespace roster::opencl::detail
