#pragma once
/// Measured choice among a kernel's variants: roster::tune_kernel times every
/// variant of one op and element type on one device, refuses any whose result
/// differs from the reference, and picks a winner by the decision rule of
/// roster/noise_rule.hpp; record_kernel_choices keeps it in the tuning file,
/// from where acquire gives it to the device (device::kernel_for).

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/kernels.hpp>
#include <roster/tuning.hpp>
#include <roster/noise_rule.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// How roster::tune_kernel measures one op.
struct tune_options {
  std::uint32_t reps = 10;          ///< timed runs per variant, the variants interleaved
  std::vector<scalar_arg> scalars{};  ///< the call's scalars; empty: 0.5 for a float, 1 for an integer
  std::size_t extent = 0;           ///< the call's extent; 0: the buffers' length
  /// The reference each variant's result must match, run on the host over the
  /// same inputs on [0, extent); null: the default variant's result.
  host_kernel_fn reference = nullptr;
  double min_gain = noise_rule::min_gain;  ///< the minimum gain a variant needs to replace the default
};

/// One variant as tune_kernel measured it.
struct variant_timing {
  std::string variant;
  bool is_default = false;
  std::vector<double> ns;          ///< each timed run, in nanoseconds
  double median_ns = 0.0;
  double spread = 0.0;             ///< relative interquartile range
  std::optional<error> wrong;      ///< why its result was refused; a refused variant never wins
};

/// The outcome of tune_kernel: every variant's timings and the choice.
struct kernel_tuning {
  std::vector<variant_timing> variants;
  kernel_choice choice;  ///< the winner, or the default when none beat it beyond the noise
  /// Returns the refusals (a variant whose result differed from the reference).
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<error> refused() const;
};

/// Applies the decision rule to measured variants: the variant with the lowest
/// median among those that beat `baseline` by more than the larger spread and
/// `min_gain`; a variant marked wrong is never chosen. Fills the choice's
/// variant, baseline and figures (op, type and size class are the caller's).
[[nodiscard]] ROSTER_API ROSTER_INLINE kernel_choice choose_variant(std::span<const variant_timing> variants,
                                                                   std::string_view baseline,
                                                                   double min_gain = noise_rule::min_gain);

/// Times every variant of `op` over `type` that the device's backend has, on
/// buffers of `size` elements filled with fixed values, `reps` runs each after
/// a checked run; a variant whose result differs from the reference is
/// refused (kept in the result with its error) and never chosen. Errors: no
/// kernel for the op on this backend, no default variant, a call the
/// signature refuses, or a failed dispatch.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<kernel_tuning> tune_kernel(device& d, std::string_view op,
                                                                         element_type type, std::size_t size,
                                                                         const tune_options& options = {});

/// Writes kernel choices into the tuning file at `path` as the device's
/// record (its figures and other choices under the same driver are kept; see
/// save_tuning), then reloads the default file's cache.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> record_kernel_choices(const adapter_info& a,
                                                                           std::span<const kernel_choice> choices,
                                                                           const std::string& path);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/store/variants-inl.hpp>
#endif
