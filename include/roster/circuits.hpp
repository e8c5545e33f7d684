#pragma once
/// Circuits: the machine's physical devices, merged across the backends that
/// see them; their order, the primary and auxiliary roles, the fallback chain
/// and rank binding.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/device.hpp>
#include <roster/error.hpp>
#include <roster/occupancy.hpp>
#include <roster/select.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// One physical device, merged across the adapters that see it.
struct circuit {
  std::size_t index = 0;                   ///< position in circuits(); stable until rescan()
  adapter_info adapter;                    ///< the preferred adapter (lowest selector term, then backend rank)
  std::vector<adapter_info> alternates;    ///< the other adapters of this device, in preference order
  std::optional<double> score;             ///< from the score provider, when it had a figure
  std::optional<device_occupancy> occupancy; ///< memory, compute mode, MIG and processes, where NVML answers
  /// Returns the kind of device (the preferred adapter's type).
  [[nodiscard]] device_type type() const noexcept { return adapter.type; }
  /// Returns what identifies the device: its UUID, else its PCI address, else "host CPU" or its spec.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string identity() const;
  /// Opens the device through the cache: the preferred adapter, else each alternate in turn.
  [[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> open() const noexcept;
};

/// A backend whose enumerator failed during the last scan.
struct enumeration_failure {
  std::string backend;
  roster::error error;
};

/// Returns the circuits, best first: the adapters of every registered backend
/// that enumerates, filtered and ordered by ROSTER_DEVICE_SELECTOR, merged by
/// device UUID, else by PCI address (never by vendor and device id), with
/// every adapter of type cpu merged into one host-CPU circuit. Vendor masks
/// (CUDA_VISIBLE_DEVICES and its kin) hide devices from every backend;
/// ROSTER_REQUIRE drops adapters that fall short; a GPU whose compute mode is
/// prohibited, or exclusive and held by another process, is left out (NVML).
/// Order: selector term, then discrete, integrated, virtual, other, cpu; then
/// score (higher first, scored before unscored); then idle before busy (other
/// processes on it); then PCI address. Scanned once; the span
/// stays valid for the process and its indices are stable until rescan().
/// A malformed selector is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::span<const circuit>> circuits() noexcept;

/// Returns the backends whose enumerator failed in the last scan.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<enumeration_failure> enumeration_failures();

/// Returns the best circuit, or null when there is none (circuits() says why).
[[nodiscard]] ROSTER_API ROSTER_INLINE const circuit* primary() noexcept;

/// Returns the best circuit other than the primary, preferring an integrated
/// GPU; null when there are fewer than two circuits.
[[nodiscard]] ROSTER_API ROSTER_INLINE const circuit* auxiliary() noexcept;

/// Opens the primary circuit's device, else the host CPU's; null only when nothing opens.
[[nodiscard]] ROSTER_API ROSTER_INLINE device* try_primary_device() noexcept;

/// Opens the auxiliary circuit's device, else the primary's, else the host
/// CPU's (a cpu circuit, then the spec "cpu"); null only when nothing opens.
[[nodiscard]] ROSTER_API ROSTER_INLINE device* try_auxiliary_device() noexcept;

/// Returns the device ROSTER_DEVICE names (through get_device), else the primary circuit's.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> default_device() noexcept;

/// Gives a measured figure for an adapter (higher is better), or nullopt.
using score_provider = std::function<std::optional<double>(const adapter_info&)>;

/// Sets the hook that ranks circuits of one type by measured figures (the
/// tuning layer sets it); an empty function removes it. Takes effect at the
/// next scan (the first circuits() call, or rescan()).
ROSTER_API ROSTER_INLINE void set_score_provider(score_provider provider);

/// Returns the trace: why each adapter was kept, dropped or merged in the last
/// scan, and which device each role chose since. With ROSTER_TRACE=1 each line
/// is also printed to stderr as it is made.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::string> trace_lines();

namespace detail {
/// Returns "circuit N SPEC (NAME, TYPE, UUID, pci ADDRESS)", for the trace.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string describe(const circuit& c);
/// Appends a line to the trace (printed under ROSTER_TRACE); never throws.
ROSTER_API ROSTER_INLINE void add_trace_line(std::string line) noexcept;
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/circuits-inl.hpp>
#endif
