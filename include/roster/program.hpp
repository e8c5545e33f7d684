#pragma once
/// The program: an ordered list of STREAM steps over device buffers.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
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

/// One kind of program step. The first op_count are roster's built-in ops;
/// `call` runs a user kernel from the kernel inventory (roster/kernels.hpp).
enum class op : std::uint8_t { fill, copy, mul, add, triad, nstream, dot, grid_sync, call };
/// Number of built-in ops (call is not one of them).
inline constexpr std::size_t op_count = 8;

/// Returns the op's name, e.g. "triad".
constexpr std::string_view to_string(op o) noexcept {
  constexpr std::string_view names[] = {"fill", "copy", "mul", "add", "triad", "nstream", "dot", "grid_sync", "call"};
  const auto i = static_cast<std::size_t>(o);
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

/// The variant name of the entries for roster's built-in ops.
inline constexpr std::string_view builtin_variant = "builtin";

/// Returns the built-in op named `name` ("triad"), or op::call when none is.
constexpr op builtin_op(std::string_view name) noexcept {
  for (std::size_t o = 0; o < op_count; ++o)
    if (to_string(static_cast<op>(o)) == name) return static_cast<op>(o);
  return op::call;
}

/// Type of a scalar argument of a kernel call.
enum class scalar_type : std::uint8_t { f32, f64, i32, u32 };

/// Returns "float", "double", "int32" or "uint32".
constexpr std::string_view to_string(scalar_type t) noexcept {
  constexpr std::string_view names[] = {"float", "double", "int32", "uint32"};
  const auto i = static_cast<std::size_t>(t);
  return i < std::size(names) ? names[i] : std::string_view("unknown");
}

/// One scalar argument of a kernel call, with its type.
struct scalar_arg {
  scalar_type type = scalar_type::f64;
  union {
    float f32;
    double f64 = 0.0;
    std::int32_t i32;
    std::uint32_t u32;
  };
  constexpr scalar_arg() noexcept = default;
  /// Holds a float.
  constexpr scalar_arg(float v) noexcept : type(scalar_type::f32), f32(v) {}
  /// Holds a double.
  constexpr scalar_arg(double v) noexcept : type(scalar_type::f64), f64(v) {}
  /// Holds a 32-bit signed integer.
  constexpr scalar_arg(std::int32_t v) noexcept : type(scalar_type::i32), i32(v) {}
  /// Holds a 32-bit unsigned integer.
  constexpr scalar_arg(std::uint32_t v) noexcept : type(scalar_type::u32), u32(v) {}
  /// Returns the value as T, converted (the caller checked that it fits).
  template <class T>
  [[nodiscard]] constexpr T as() const noexcept {
    switch (type) {
      case scalar_type::f32: return static_cast<T>(f32);
      case scalar_type::f64: return static_cast<T>(f64);
      case scalar_type::i32: return static_cast<T>(i32);
      case scalar_type::u32: return static_cast<T>(u32);
    }
    return T{};
  }
};

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

/// A call of a user kernel: the op's name, its arguments in signature order,
/// and the index space. A program owns its calls; steps point at them.
struct kernel_call {
  std::string op;                   ///< the kernel's op name, e.g. "axpy"
  std::string variant;              ///< the variant to run; empty: the default
  std::vector<buffer> buffers;      ///< buffer arguments, in signature order
  std::vector<scalar_arg> scalars;  ///< scalar arguments, in signature order
  std::size_t extent = 0;           ///< index space; 0: the length of the signature's extent buffers
};

/// How a kernel call runs: an explicit extent and a variant name, both optional.
struct call_options {
  std::size_t extent = 0;        ///< index space (0: from the buffers)
  std::string_view variant = {};  ///< variant name (empty: the default)
};

/// One step: out and inputs as the step table of docs/design.md names them.
struct step {
  roster::op op = op::fill;
  buffer out{};    ///< fill a, copy c, mul b, add c, triad a, nstream a, dot r; call: its first buffer
  buffer in1{};    ///< copy a, mul c, add a, triad b, nstream b, dot a
  buffer in2{};    ///< add b, triad c, nstream c, dot b
  double scalar = 0.0;  ///< fill x, mul/triad/nstream s
  const kernel_call* call = nullptr;  ///< op::call: the call, owned by the program
};

namespace detail {
// What validate(program) last found valid: the step count and the kernel
// inventory's signatures it checked against (an opaque token). Copied with
// the program; atomic, so a program dispatched from several threads at once
// is no data race.
struct validated_mark {
  std::atomic<std::size_t> steps{0};
  std::atomic<const void*> token{nullptr};
  validated_mark() noexcept = default;
  validated_mark(const validated_mark& o) noexcept
      : steps(o.steps.load(std::memory_order_relaxed)), token(o.token.load(std::memory_order_relaxed)) {}
  validated_mark& operator=(const validated_mark& o) noexcept {
    steps.store(o.steps.load(std::memory_order_relaxed), std::memory_order_relaxed);
    token.store(o.token.load(std::memory_order_relaxed), std::memory_order_relaxed);
    return *this;
  }
};
}  // namespace detail

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
  /// Appends a call of the user kernel `op` (see roster/kernels.hpp), checked
  /// against its registered signature when the program is validated.
  ROSTER_INLINE program& call(std::string_view op, std::span<const buffer> buffers,
                              std::span<const scalar_arg> scalars = {}, call_options options = {});
  /// Appends a call of the user kernel `op` (braced lists of buffers and scalars).
  ROSTER_INLINE program& call(std::string_view op, std::initializer_list<buffer> buffers,
                              std::initializer_list<scalar_arg> scalars = {}, call_options options = {});
  /// Appends a step as it is.
  ROSTER_INLINE program& push(const step& s);

  /// Returns the steps in order.
  [[nodiscard]] std::span<const step> steps() const noexcept { return {steps_.data(), steps_.size()}; }
  /// Returns the set of ops the program uses.
  /// Returns the set of built-in ops the program uses (user calls are not in it).
  [[nodiscard]] op_set ops() const noexcept {
    op_set s;
    for (const auto& st : steps_)
      if (st.op != op::call) s.insert(st.op);
    return s;
  }
  /// Returns whether the program calls any user kernel.
  [[nodiscard]] bool has_calls() const noexcept { return !calls_.empty(); }
  /// Returns the element type of the first buffer step (f64 if none).
  [[nodiscard]] element_type type() const noexcept;
  /// Returns whether the program has no steps.
  [[nodiscard]] bool empty() const noexcept { return steps_.empty(); }

 private:
  friend ROSTER_API ROSTER_INLINE expected<void> validate(const program& p);  // kernels.hpp
  std::vector<step> steps_;
  mutable detail::validated_mark validated_;
  // The calls' arguments: shared and immutable, so a copied program's steps
  // still point at live calls.
  std::vector<std::shared_ptr<const kernel_call>> calls_;
};

/// Returns the number of buffers a step of this op names (out, in1, in2);
/// 0 for a call, whose buffers are in its kernel_call.
constexpr int buffers_of(op o) noexcept {
  switch (o) {
    case op::fill: return 1;
    case op::copy: case op::mul: return 2;
    case op::add: case op::triad: case op::nstream: case op::dot: return 3;
    case op::grid_sync: case op::call: return 0;
  }
  return 0;
}


/// Returns the pieces of a program between grid_syncs, none holding a grid_sync
/// and none empty.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::span<const step>> split_at_grid_sync(
    std::span<const step> steps);

/// Returns the shape of a program for grid-sync choices: its ops in order,
/// "," between steps and "|" for each grid_sync, a call by its kernel's op
/// name: "triad|dot" for `triad; grid_sync; dot`.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string program_shape(std::span<const step> steps);
/// Returns whether a program has this shape, allocating nothing.
[[nodiscard]] ROSTER_API ROSTER_INLINE bool has_shape(std::span<const step> steps, std::string_view shape) noexcept;

/// Returns the bytes a step moves through memory (reads plus writes).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::size_t bytes_moved(const step& s) noexcept;

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/program-inl.hpp>
#endif
