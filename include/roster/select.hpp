#pragma once
/// The selector (ROSTER_DEVICE_SELECTOR): the user's filter and order over
/// adapters; and the local rank an MPI launcher gives this process.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// What one selector term matches within its backend.
enum class selector_what : std::uint8_t {
  any,          ///< `*`
  ordinal,      ///< `0`, `1`, ...
  type,         ///< `gpu`, `cpu`, `discrete`, `integrated`, `virtual`, `other`
  uuid_prefix,  ///< `GPU-0b8a5f29`, or bare hex with at least 4 digits
  pci,          ///< `pci=0000:00:07`: prefix of the normalized PCI address
};

/// One term of a selector: `[!]backend:what` or `[!]pci=ADDR`.
struct selector_term {
  bool exclude = false;            ///< written with a leading `!`
  std::string backend;             ///< lower case; "*" for every backend
  selector_what what = selector_what::any;
  std::uint32_t ordinal = 0;       ///< for selector_what::ordinal
  std::string type;                ///< for selector_what::type, lower case
  std::string uuid_hex;            ///< for selector_what::uuid_prefix: lower-case hex digits, no dashes
  std::string pci;                 ///< for selector_what::pci: normalized prefix
  std::string text;                ///< the term as written, trimmed
  /// Returns whether this term matches the adapter (ignoring `exclude`).
  [[nodiscard]] ROSTER_API ROSTER_INLINE bool matches(const adapter_info& a) const;
};

/// How a selector judged one adapter.
struct selector_verdict {
  bool kept = true;                ///< false: dropped
  std::size_t order = 0;           ///< index of the first include term it matched (0 with none)
  std::string reason;              ///< why, for the trace
};

/// A parsed selector: include terms filter and order, exclude terms drop.
struct selector {
  std::vector<selector_term> terms;
  /// Returns whether the selector has no terms (keeps every adapter).
  [[nodiscard]] bool empty() const noexcept { return terms.empty(); }
  /// Judges an adapter: dropped when an exclude term matches it, or when
  /// include terms exist and none matches it; ordered by the first include
  /// term it matches.
  [[nodiscard]] ROSTER_API ROSTER_INLINE selector_verdict judge(const adapter_info& a) const;
  /// Says why no adapter of backend `id` can be kept (an exclude term names
  /// the whole backend, or include terms exist and none can match it), or
  /// returns empty: circuits then do not ask that backend at all.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string rules_out(std::string_view id) const;
};

/// Parses `;`-separated terms, e.g. "cuda:0;vulkan:*", "!cpu:*", "*:gpu",
/// "cuda:GPU-0b8a5f29", "pci=0000:00:07". Blank text is an empty selector;
/// a bad term is an errc::invalid_argument error that quotes it.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<selector> parse_selector(std::string_view text);

/// Parses ROSTER_DEVICE_SELECTOR (an empty selector when unset).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<selector> selector_from_env();

/// Returns a PCI address in the form "dddd:bb:dd.f", lower case ("" stays "").
/// A missing domain becomes 0000 and a missing function .0.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string normalize_pci(std::string_view address);

/// This process's place among the ranks an MPI launcher started on this node.
struct local_rank_info {
  int rank = 0;                    ///< local rank
  int size = 0;                    ///< ranks on this node; 0 when the launcher does not say
  std::string rank_variable;       ///< e.g. "OMPI_COMM_WORLD_LOCAL_RANK"
  std::string size_variable;       ///< e.g. "OMPI_COMM_WORLD_LOCAL_SIZE"; empty when unknown
};

/// The most ranks roster accepts on one node.
inline constexpr int local_rank_limit = 65536;

/// Reads the local rank: the one handed in with set_node_ranks (an MPI
/// communicator's, through roster/mpi.hpp), else the first set of
/// OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), MV2_COMM_WORLD_LOCAL_RANK (MVAPICH),
/// MPI_LOCALRANKID (MPICH/Hydra), SLURM_LOCALID, PMI_LOCAL_RANK,
/// PMIX_LOCAL_RANK, PALS_LOCAL_RANKID, FLUX_TASK_LOCAL_ID (Flux),
/// JSM_NAMESPACE_LOCAL_RANK (jsrun), and the local size from its partner
/// (OMPI_COMM_WORLD_LOCAL_SIZE, MV2_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
/// SLURM_NTASKS_PER_NODE, PMI_LOCAL_SIZE, PMIX_LOCAL_SIZE, PALS_LOCAL_SIZE,
/// none for Flux, JSM_NAMESPACE_LOCAL_SIZE). Returns nullopt outside a
/// launcher; a value that is not a whole number, a size past local_rank_limit,
/// or a rank not below the size is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<local_rank_info>> local_rank();

/// What an MPI communicator says of the ranks on this node.
struct node_ranks {
  int rank = 0;                     ///< this process's rank among them
  int size = 0;                     ///< ranks on this node
  std::vector<std::vector<int>> cpus;  ///< each local rank's CPUs (sched_getaffinity), by local rank; may be empty
};

/// Makes local_rank() answer from `ranks` for the rest of the process (or
/// from the launcher again, given nullopt).
/// Returns a note when a launcher variable names another local rank or size
/// (empty when they agree or none is set); an invalid `ranks` is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::string> set_node_ranks(std::optional<node_ranks> ranks);

namespace detail {
/// Returns the node's ranks handed to set_node_ranks, if any.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<node_ranks> handed_node_ranks();
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/devices/select-inl.hpp>
#endif
