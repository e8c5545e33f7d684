#pragma once
/// The program: an ordered list of STREAM steps over device buffers.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// Element type of a buffer.
enum class element_type : std::uint8_t { f32, f64 };

/// Returns "float" or "double".
constexpr std::string_view to_string(element_type t) noexcept {
  return t == element_type::f32 ? "float" : "double";
}
/// Returns the size in bytes of one element.
constexpr std::size_t size_of(element_type t) noexcept { return t == element_type::f32 ? 4 : 8; }

template <class T>
inline constexpr bool is_element_v = std::is_same_v<T, float> || std::is_same_v<T, double>;
/// Returns the element_type of float or double.
template <class T>
  requires is_element_v<T>
constexpr element_type element_of() noexcept {
  return std::is_same_v<T, float> ? element_type::f32 : element_type::f64;
}

/// One kind of program step.
enum class op : std::uint8_t { fill, copy, mul, add, triad, nstream, dot, grid_sync };
inline constexpr std::size_t op_count = 8;

/// Returns the op's name, e.g. "triad".
constexpr std::string_view to_string(op o) noexcept {
  constexpr std::string_view names[] = {"fill", "copy", "mul", "add", "triad", "nstream", "dot", "grid_sync"};
  return names[static_cast<std::size_t>(o)];
}

/// A set of ops, as a bit mask.
struct op_set {
  std::uint32_t bits = 0;
  /// Returns the set of every op.
  static constexpr op_set all() noexcept { return {(1u << op_count) - 1}; }
  /// Returns the set holding the given ops.
  static constexpr op_set of(std::initializer_list<op> ops) noexcept {
    op_set s;
    for (op o : ops) s.bits |= 1u << static_cast<unsigned>(o);
    return s;
  }
  /// Returns whether o is in the set.
  constexpr bool contains(op o) const noexcept { return (bits >> static_cast<unsigned>(o)) & 1u; }
  /// Returns whether every op of other is in the set.
  constexpr bool contains(op_set other) const noexcept { return (other.bits & ~bits) == 0; }
  /// Adds an op.
  constexpr op_set& insert(op o) noexcept { bits |= 1u << static_cast<unsigned>(o); return *this; }
  friend constexpr bool operator==(op_set, op_set) = default;
};

/// A handle to a buffer on one device; the device owns the memory.
struct buffer {
  std::uint64_t owner = 0;   ///< id of the device that allocated it (0: none)
  std::uint32_t slot = 0;    ///< the device's index for it
  element_type type = element_type::f64;
  std::size_t size = 0;      ///< number of elements
  friend constexpr bool operator==(const buffer&, const buffer&) = default;
};

/// One step: out and inputs as the step table of docs/design.md names them.
struct step {
  roster::op op = op::fill;
  buffer out{};    ///< fill a, copy c, mul b, add c, triad a, nstream a, dot r
  buffer in1{};    ///< copy a, mul c, add a, triad b, nstream b, dot a
  buffer in2{};    ///< add b, triad c, nstream c, dot b
  double scalar = 0.0;  ///< fill x, mul/triad/nstream s
};

/// Largest number of steps in one program.
inline constexpr std::size_t max_program_steps = 1024;

/// An ordered list of steps, built with the member functions.
class program {
 public:
  /// Appends a[i] = x.
  program& fill(const buffer& a, double x) { return push({op::fill, a, {}, {}, x}); }
  /// Appends c[i] = a[i].
  program& copy(const buffer& c, const buffer& a) { return push({op::copy, c, a, {}, 0.0}); }
  /// Appends b[i] = s * c[i].
  program& mul(const buffer& b, const buffer& c, double s) { return push({op::mul, b, c, {}, s}); }
  /// Appends c[i] = a[i] + b[i].
  program& add(const buffer& c, const buffer& a, const buffer& b) { return push({op::add, c, a, b, 0.0}); }
  /// Appends a[i] = b[i] + s * c[i].
  program& triad(const buffer& a, const buffer& b, const buffer& c, double s) {
    return push({op::triad, a, b, c, s});
  }
  /// Appends a[i] += b[i] + s * c[i].
  program& nstream(const buffer& a, const buffer& b, const buffer& c, double s) {
    return push({op::nstream, a, b, c, s});
  }
  /// Appends r[0] = sum of a[i] * b[i].
  program& dot(const buffer& r, const buffer& a, const buffer& b) { return push({op::dot, r, a, b, 0.0}); }
  /// Appends a barrier: every earlier step completes before any later one starts.
  program& grid_sync() { return push({op::grid_sync, {}, {}, {}, 0.0}); }
  /// Appends a step as it is.
  program& push(const step& s) {
    steps_.push_back(s);
    return *this;
  }

  /// Returns the steps in order.
  [[nodiscard]] std::span<const step> steps() const noexcept { return steps_; }
  /// Returns the set of ops the program uses.
  [[nodiscard]] op_set ops() const noexcept {
    op_set s;
    for (const auto& st : steps_) s.insert(st.op);
    return s;
  }
  /// Returns the element type of the first buffer step (f64 if none).
  [[nodiscard]] element_type type() const noexcept;
  /// Returns whether the program has no steps.
  [[nodiscard]] bool empty() const noexcept { return steps_.empty(); }

 private:
  std::vector<step> steps_;
};

/// Returns the number of buffers a step of this op names (out, in1, in2).
constexpr int buffers_of(op o) noexcept {
  switch (o) {
    case op::fill: return 1;
    case op::copy: case op::mul: return 2;
    case op::add: case op::triad: case op::nstream: case op::dot: return 3;
    case op::grid_sync: return 0;
  }
  return 0;
}

/// Checks a program's structure: non-empty, not oversized, buffers present
/// and of one element type, lengths that agree, finite scalars.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> validate(std::span<const step> steps);
/// Checks a program's structure (see the span overload).
[[nodiscard]] inline expected<void> validate(const program& p) { return validate(p.steps()); }

/// Returns the pieces of a program between grid_syncs, none holding a grid_sync
/// and none empty.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::span<const step>> split_at_grid_sync(
    std::span<const step> steps);

/// Returns the bytes a step moves through memory (reads plus writes).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::size_t bytes_moved(const step& s) noexcept;

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/program-inl.hpp>
#endif
