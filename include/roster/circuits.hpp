#pragma once
/// Circuits: the machine's physical devices, merged across the backends that
/// see them, each with its adapters in preference order, and their order. The
/// decision (roster/decide.hpp) chooses among them; its roles, router and
/// rank binding read this one view.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/device_cache.hpp>
#include <roster/error.hpp>
#include <roster/occupancy.hpp>
#include <roster/select.hpp>
#include <roster/tuning/record.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// One physical device, merged across the adapters that see it.
struct circuit {
  std::size_t index = 0;                   ///< position in circuits(); stable until rescan()
  adapter_info adapter;                    ///< the preferred adapter
  std::vector<adapter_info> alternates;    ///< the other adapters of this device, in preference order
  std::optional<double> score;             ///< the preferred adapter's measured triad GB/s, when a record has it
  std::optional<device_occupancy> occupancy; ///< memory, compute mode, MIG and processes, where NVML answers
  std::string preferred_because;           ///< why its adapter is preferred: measurements, the software rule, rank
  std::string placed_because;              ///< what put it where it stands among the circuits
  /// Returns the kind of device (the preferred adapter's type).
  [[nodiscard]] device_type type() const noexcept { return adapter.type; }
  /// Returns what identifies the device: its UUID, else its PCI address, else "host CPU" or its spec.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string identity() const;
  /// Returns whether any adapter of it reports a UUID or a PCI address.
  [[nodiscard]] ROSTER_API ROSTER_INLINE bool identified() const noexcept;
  /// Opens the device through the cache: the preferred adapter, else each alternate in turn.
  [[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> open() const noexcept;
  friend bool operator==(const circuit&, const circuit&) = default;
};

/// A backend whose enumerator failed during the last scan.
struct enumeration_failure {
  std::string backend;
  roster::error error;
  friend bool operator==(const enumeration_failure&, const enumeration_failure&) = default;
};

/// Returns the circuits, best first: the adapters of every registered backend
/// that enumerates (a backend the selector or ROSTER_REQUIRE rules out is not
/// asked), filtered and ordered by ROSTER_DEVICE_SELECTOR, merged by device
/// UUID, else by PCI address (never by vendor and device id), with every
/// adapter of type cpu merged into one host-CPU circuit. Vendor masks
/// (CUDA_VISIBLE_DEVICES and its kin) hide devices from every backend;
/// ROSTER_REQUIRE drops adapters that fall short; a GPU whose compute mode is
/// prohibited, or exclusive and held by another process, is left out (NVML).
/// Inside a circuit the adapters go by selector term, then native before
/// software (lavapipe, PoCL), then backend rank, and a tuning record moves one
/// ahead only when it measured faster beyond the noise (ROSTER_TUNING=off
/// reads none). Circuits go by selector term, then discrete, integrated,
/// virtual, other, cpu; then idle before busy; then PCI address and rank, and
/// within one type a record moves a circuit ahead by the same rule. Scanned
/// once; the span stays valid for the process and its indices are stable
/// until rescan(). A malformed selector, requirement or ROSTER_TUNING is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::span<const circuit>> circuits() noexcept;

/// Returns the backends whose enumerator failed in the last scan.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<enumeration_failure> enumeration_failures();

/// Returns the trace: why each adapter was kept, dropped or merged in the last
/// scan, and what each decision chose since. With ROSTER_TRACE=1 each line is
/// also printed to stderr as it is made.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::string> trace_lines();

namespace detail {
/// Returns "circuit N SPEC (NAME, TYPE, UUID, pci ADDRESS)", for the trace.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string describe(const circuit& c);
/// Returns "SPEC (NAME, TYPE, UUID, pci ADDRESS)", for the trace.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string describe(const adapter_info& a);
/// Appends a line to the trace (printed under ROSTER_TRACE); never throws.
ROSTER_API ROSTER_INLINE void add_trace_line(std::string line) noexcept;
/// Orders adapters of one device for work over `ops` and `type` (nullopt:
/// either): by the term of `sel` that keeps each (when given), then native
/// before software when neither record decides, then the given order; a
/// record moves one ahead inside its term when it measured faster beyond the
/// noise. Says why the first leads in `because`.
ROSTER_API ROSTER_INLINE void order_adapters(std::vector<adapter_info>& adapters,
                                             std::span<const tuning_record> records, op_set ops,
                                             std::optional<element_type> type, std::string* because,
                                             const selector* sel = nullptr);
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/circuits/circuits-inl.hpp>
#endif
