#pragma once
// Private: the hooks tests and benchmarks use to reset state that the public
// API keeps for the life of the process. Only tests and benchmarks include
// this header: scripts/check-layers fails when a header of roster or of a
// backend includes it, so no hook reaches a user through a public header.

#include <roster/inventory.hpp>

namespace roster::testing {

/// Drops every frozen inventory snapshot, so the next inventory<T>() collects
/// again. For benchmarks of the first collection: no span handed out before
/// may be used afterwards.
inline void invalidate_inventories() noexcept { detail::invalidate_for_testing(); }

}  // namespace roster::testing
