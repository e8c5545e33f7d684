#pragma once
/// Rank binding: which circuit this MPI rank uses, the CPUs that go with it,
/// and the record `roster-info bind` prints.

#include <roster/circuits.hpp>
#include <roster/decide.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/select.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace roster {

/// The circuit this rank is bound to, and the CPUs that go with it.
struct rank_binding {
  std::optional<local_rank_info> launcher;  ///< the launcher's local rank, nullopt outside one
  const roster::circuit* circuit = nullptr; ///< the GPU circuit local_rank % n (the primary outside a launcher)
  adapter_info adapter;                     ///< the adapter of `circuit` the decision chose (ROSTER_DEVICE's, when it names one)
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

/// Binds this process to the circuit roster::decide() chooses for the
/// primary role: local ranks go round-robin over the GPU circuits (counted
/// after the selector, the masks and ROSTER_REQUIRE; an adapter with neither
/// UUID nor PCI address takes no ranks unless the selector names it); the CPU
/// circuit takes ranks only when no GPU circuit is left or the selector names
/// it. When the launcher's local size exceeds the circuits, `warning`
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

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/binding-inl.hpp>
#endif
