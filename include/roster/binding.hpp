#pragma once
/// Rank binding: which circuit this MPI rank uses, the CPUs that go with it,
/// and the record `roster-info bind` prints.

#include <roster/circuits.hpp>
#include <roster/decide.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/select.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// The circuit this rank is bound to, and the CPUs that go with it.
struct rank_binding {
  std::optional<local_rank_info> launcher;  ///< the launcher's local rank, nullopt outside one
  int world_rank = -1;                      ///< the job's rank (the launcher's variable, or the communicator's), -1 when unknown
  const roster::circuit* circuit = nullptr; ///< the GPU circuit local_rank % n (the primary outside a launcher)
  adapter_info adapter;                     ///< the adapter of `circuit` the decision chose (ROSTER_DEVICE's, when it names one)
  std::size_t sharing = 1;                  ///< local ranks bound to this circuit, this one included
  std::size_t sharer = 0;                   ///< this rank's place among them
  std::string warning;                      ///< ranks sharing this circuit, empty when none share
  std::string policy;                       ///< the binding policy and where it came from, e.g. "closest (the default)"
  std::string circuit_reason;               ///< why this circuit: the rank, the policy, the pool and its place in it
  std::vector<std::string> pool;            ///< identities of the circuits ranks are placed on, in the node's one order
  std::vector<int> cpus;                    ///< CPUs for this rank: local to its device, within the launcher's
  std::vector<int> device_cpus;             ///< CPUs local to the device, empty when unknown
  int numa_node = -1;                       ///< the device's NUMA node, -1 when unknown
  bool pinned = false;                      ///< whether bind_rank pinned the process to `cpus`
  std::string cpu_reason;                   ///< how `cpus` was chosen, and why not pinned when asked
  /// Returns `cpus` as a list, e.g. "0-15,32".
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string cpuset() const;
  /// Returns the ordinal of the bound device's adapter of `backend` (e.g.
  /// "cuda": the ordinal for cudaSetDevice, whichever adapter the decision
  /// prefers), nullopt when no adapter of that backend sees the device.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<std::uint32_t> ordinal_for(std::string_view backend) const;
};

/// How bind_rank binds.
struct bind_options {
  /// Pin the process to the CPUs local to its device. Off by default, because
  /// MPI launchers bind ranks already (mpirun --bind-to, srun --cpu-bind) and
  /// pinning behind them would fight them; ROSTER_BIND_CPUS=1 turns it on too.
  bool pin_cpus = false;
};

/// Binds this process to the circuit roster::decide() chooses for the
/// primary role. Under a launcher, local ranks are placed on a pool of
/// circuits that every rank of the node builds alike (the GPU circuits left
/// by the selector, the masks and ROSTER_REQUIRE, ordered by selector term,
/// type, PCI address and UUID, never by occupancy or records; an adapter with
/// neither UUID nor PCI address takes no ranks unless the selector names it;
/// the CPU circuit only when no GPU circuit is left) by the policy: closest
/// by default, map_gpu, single:N or none (see bind_policy). When ranks share
/// a device, `warning` says which (also in the trace). Reports the CPUs local
/// to the device and pins to them when asked. No circuit is an error, and so
/// is a local size past local_rank_limit.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<rank_binding> bind_rank(const bind_options& options) noexcept;
/// Binds as bind_rank(options) does, placing the launcher's ranks by
/// `policy` instead of ROSTER_GPU_BIND's.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<rank_binding> bind_rank(const bind_policy& policy,
                                                                     const bind_options& options) noexcept;
/// Binds with the default options (ROSTER_BIND_CPUS=1 pins).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<rank_binding> bind_rank() noexcept;

/// Returns one JSON line (no newline) describing a binding, as `roster-info
/// bind` prints it under mpirun or srun: host, rank (from the launcher's world
/// rank variable, null when none), local_rank, local_size, circuit, type,
/// uuid, pci_address, adapter, name, cpuset, numa_node, pinned, sharing,
/// warning, policy, pool, device_cpus and reasons.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string binding_record(const rank_binding& b);

/// One thing the job check found wrong with a job's placement.
struct placement_problem {
  std::string kind;  ///< "shared while idle", "far from its device", "pools differ" or "unreadable record"
  std::string host;  ///< the node, empty when unknown
  std::string text;  ///< what is wrong, and with which ranks and devices
};

/// The job check: every rank's binding, read together.
struct job_check {
  std::vector<std::string> records;         ///< every rank's binding_record, in the order given
  std::vector<placement_problem> problems;  ///< empty when the placement is sound
  /// Returns whether no problem was found.
  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
  /// Returns a table, a line per rank (host, rank, local rank, device, adapter,
  /// CPUs, whether they are local to the device, sharing), the problems after it.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string table() const;
  /// Returns {"ok":..., "ranks":[records], "problems":[{"kind","host","text"}]} on one line.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string json() const;
};

/// Checks a whole job's placement from every rank's binding_record (gathered
/// by roster::mpi::check_job, or `roster-info bind` lines read back by
/// `roster-info bind --check`): ranks sharing a device while another device of
/// their node's pool idles, ranks whose CPUs are not local to their device,
/// nodes whose pools differ, records that do not parse. A report: the
/// application decides whether to stop. No record is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<job_check> check_placement(std::span<const std::string> records);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/decision/binding-inl.hpp>
#endif
