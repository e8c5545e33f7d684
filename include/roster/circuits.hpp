#pragma once
/// Circuits: the machine's physical devices, merged across the backends that
/// see them; their order, the primary and auxiliary roles, the fallback chain
/// and rank binding.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/device.hpp>
#include <roster/error.hpp>
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

/// How busy a GPU is, read without creating a context (through NVML).
struct device_occupancy {
  /// Who may use the device (nvidia-smi -c).
  enum class compute_mode : std::uint8_t { shared, exclusive_thread, prohibited, exclusive_process };
  std::string source;                  ///< "NVML", or where a test's answers came from
  std::uint64_t memory_total = 0;      ///< bytes
  std::uint64_t memory_free = 0;       ///< bytes
  compute_mode mode = compute_mode::shared;
  bool mig_enabled = false;            ///< MIG mode on: work runs on its instances
  std::vector<std::string> mig_uuids;  ///< the MIG instances' "MIG-..." UUIDs
  std::vector<unsigned> pids;          ///< processes with a context on the device
};

/// Returns "shared", "exclusive-thread", "prohibited" or "exclusive-process".
constexpr std::string_view to_string(device_occupancy::compute_mode m) noexcept {
  switch (m) {
    case device_occupancy::compute_mode::shared: return "shared";
    case device_occupancy::compute_mode::exclusive_thread: return "exclusive-thread";
    case device_occupancy::compute_mode::prohibited: return "prohibited";
    case device_occupancy::compute_mode::exclusive_process: return "exclusive-process";
  }
  return "unknown";
}

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

/// The circuit this rank is bound to, and the CPUs that go with it.
struct rank_binding {
  std::optional<local_rank_info> launcher;  ///< the launcher's local rank, nullopt outside one
  const roster::circuit* circuit = nullptr; ///< the GPU circuit local_rank % n (the primary outside a launcher)
  std::size_t sharing = 1;                  ///< local ranks bound to this circuit, this one included
  std::string warning;                      ///< ranks sharing this circuit, empty when none share
  std::string circuit_reason;               ///< why this circuit: the rank, the pool and its place in it
  std::vector<int> cpus;                    ///< CPUs for this rank: local to its device, within the launcher's
  int numa_node = -1;                       ///< the device's NUMA node, -1 when unknown
  bool pinned = false;                      ///< whether bind_rank pinned the process to `cpus`
  std::string cpu_reason;                   ///< how `cpus` was chosen, and why not pinned when asked
  /// Returns `cpus` as a list, e.g. "0-15,32".
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string cpuset() const;
};

/// How bind_rank binds.
struct bind_options {
  /// Pin the process to the CPUs local to its device. Off by default, because
  /// MPI launchers bind ranks already (mpirun --bind-to, srun --cpu-bind) and
  /// pinning behind them would fight them; ROSTER_BIND_CPUS=1 turns it on too.
  bool pin_cpus = false;
};

/// Binds this process to a circuit: local ranks go round-robin over the GPU
/// circuits (counted after the selector, the masks and ROSTER_REQUIRE); the
/// CPU circuit takes ranks only when no GPU circuit is left or the selector
/// names it. When the launcher's local size exceeds the circuits, `warning`
/// says how many ranks share this rank's device (also in the trace). Reports
/// the CPUs local to the device and pins to them when asked. No circuit is an
/// error, and so is a local size past local_rank_limit.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<rank_binding> bind_rank(const bind_options& options) noexcept;
/// Binds with the default options (ROSTER_BIND_CPUS=1 pins).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<rank_binding> bind_rank() noexcept;

/// Returns one JSON line (no newline) describing a binding, as `roster-info
/// bind` prints it under mpirun or srun: host, rank (from the launcher's world
/// rank variable, null when none), local_rank, local_size, circuit, type,
/// uuid, pci_address, adapter, name, cpuset, numa_node, pinned, sharing,
/// warning and reasons.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string binding_record(const rank_binding& b);

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/circuits-inl.hpp>
#endif
