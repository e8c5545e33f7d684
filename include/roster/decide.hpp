#pragma once
/// The one decision of where to run. decide() takes what the caller needs (a
/// role, ops and an element type or a whole program) and returns the adapter
/// to use with every reason: what the selector, the vendor masks and
/// ROSTER_REQUIRE left (circuits), the launcher's local rank, the role, the
/// capability and the measurements. The roles, the router, default_device and
/// bind_rank (binding.hpp) are thin calls of it, so on one machine and one
/// environment they name the same adapter.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/circuits.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>
#include <roster/select.hpp>
#include <roster/detail/decision/bind_policy.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// What a caller keeps a device for.
enum class role : std::uint8_t {
  primary,    ///< the main workload: the best circuit (the launcher's rank's, under one)
  auxiliary,  ///< side work: the best circuit other than the primary's
};

/// Returns "primary" or "auxiliary".
constexpr std::string_view to_string(role r) noexcept { return r == role::primary ? "primary" : "auxiliary"; }

/// Parses a policy: "closest", "map_gpu:0,1,1,0", "single:2" or "none" (any
/// case); a bad word is an errc::invalid_argument error that quotes it.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<bind_policy> parse_bind_policy(std::string_view text);

/// Returns the policy ROSTER_GPU_BIND names, else closest.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<bind_policy> bind_policy_from_env();

/// What the decision is asked for.
struct decision_request {
  roster::role role = roster::role::primary;
  op_set ops{};                          ///< built-in ops the work needs; empty: any adapter that dispatches
  std::optional<element_type> type;      ///< its element type; unset: either
  const roster::program* program = nullptr;  ///< the work itself (its ops, type and calls); replaces ops and type
  bool follow_launcher = true;           ///< under an MPI launcher, start from the local rank's circuit
  std::optional<bind_policy> bind;       ///< how the launcher's ranks are placed; unset: bind_policy_from_env()
};

/// An adapter the decision did not choose, and why.
struct passed_over {
  std::string spec;  ///< e.g. "vulkan:0", or a backend id
  std::string reason;
};

/// Where the launcher's rank was bound.
struct launcher_binding {
  local_rank_info rank;
  std::size_t pool = 0;  ///< circuits ranks are placed on (the same for every rank of the node)
  std::size_t slot = 0;  ///< this rank's place among them
  bind_policy policy;    ///< the policy that placed it
  std::string placed;    ///< how the policy placed it
  std::vector<std::vector<int>> pool_cpus;  ///< each pool circuit's local CPUs, empty when unknown
};

/// The decision: the adapter, its circuit, the other adapters in the order
/// they would be tried, and every reason.
struct decision {
  device_spec spec;                          ///< the adapter to open
  adapter_info adapter;                      ///< its identity (only backend and ordinal when ROSTER_DEVICE named it unscanned)
  const roster::circuit* circuit = nullptr;  ///< its circuit; null when ROSTER_DEVICE named it unscanned
  std::vector<adapter_info> fallbacks;       ///< the next adapters that can run the work, in order
  std::optional<launcher_binding> launcher;  ///< under an MPI launcher
  std::vector<std::string> reasons;          ///< each part of the decision, e.g. "measurements: ..."
  std::vector<passed_over> passed;           ///< adapters passed over, and why
  /// Backends not asked, their APIs not started: the machine's GPU list (NVML,
  /// sysfs) and the records showed they cannot change the decision. Opening
  /// the choice and its fallbacks failing, a decision asks them after all.
  std::vector<std::string> not_asked;
};

/// Decides where to run what the request asks; also printed under ROSTER_TRACE.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<decision> decide(const decision_request& request = {});

/// Returns the primary circuit (decide's), or null when there is none.
[[nodiscard]] ROSTER_API ROSTER_INLINE const circuit* primary() noexcept;
/// Returns the auxiliary circuit (decide's: the best other than the primary's,
/// an integrated GPU first), or null when there is only one circuit.
[[nodiscard]] ROSTER_API ROSTER_INLINE const circuit* auxiliary() noexcept;

/// Opens the primary device (decide's), else the host CPU's; null only when
/// nothing opens or ROSTER_REQUIRE rules the fallback out.
[[nodiscard]] ROSTER_API ROSTER_INLINE device* try_primary_device() noexcept;
/// Opens the auxiliary device (never the primary's while another circuit
/// exists), else the primary's, else the host CPU's; null only when nothing opens.
[[nodiscard]] ROSTER_API ROSTER_INLINE device* try_auxiliary_device() noexcept;
/// Returns the device ROSTER_DEVICE names (no other backend is asked), else
/// the primary device (decide's), through the cache.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> default_device() noexcept;

/// The router's choice.
struct routed_device {
  std::unique_ptr<roster::device> device;
  std::string backend;
  roster::decision decision;  ///< why, and what was passed over
};

/// Opens (a new device, through the one open path) the adapter decide()
/// chooses for a program: from the primary circuit (the rank's under a
/// launcher), moving to another only when it cannot run the program.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p);
/// Opens the preferred device for programs of these ops and element type,
/// before any buffer exists (the program overload needs buffers of some device).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<routed_device> acquire_preferred(op_set ops, element_type type);

/// Says why a triad figure (GB/s) measured on `adapter` is the machine's
/// load and not the adapter's: for an adapter that runs on the host's cores,
/// a figure below 5% of one plain thread of this process, timed now,
/// means the pool's threads could not get the cores (other processes keep
/// them busy). Such a figure must not be recorded; the error's Fix says
/// what to do. Nothing when the figure stands, when the adapter is a GPU's,
/// or when it was measured on arrays of fewer than 2^22 elements: a figure
/// that small is bound by the dispatch, not by the memory, and says nothing
/// against one thread's bandwidth. ROSTER_TUNING=measure and roster-info
/// bench both check with it.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<error> contended_triad(const adapter_info& adapter,
                                                                           double triad_gbps,
                                                                           std::uint64_t elements);

/// Holds the measure lock of a tuning file (FILE.measure.lock beside the
/// file at the end of its links) for as long as the returned handle lives,
/// waiting for it up to `wait_ms`: processes that record into one file
/// measure one at a time, so that none records figures the other's
/// measuring spoiled. An errc::unavailable error when another process kept
/// it past the wait; errc::io when the lock file cannot be made or locked
/// (the save of the records then says the same of the tuning file).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::shared_ptr<const void>> hold_measure_lock(
    const std::string& tuning_file, std::uint32_t wait_ms);

namespace detail {
/// The circuits ranks are placed on: the identified GPU circuits (an adapter
/// with neither UUID nor PCI address takes no ranks unless the selector names
/// it); the others only when no GPU circuit is left. Ordered by facts that are
/// the same for every rank of a node (selector term, type, PCI address, UUID),
/// never by occupancy or records, so ranks that look at different moments
/// build the same pool.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<const circuit*> rank_pool(std::span<const circuit> list);
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/decision/decide-inl.hpp>
#endif
