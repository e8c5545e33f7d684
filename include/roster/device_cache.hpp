#pragma once
/// The device cache: one live device per normalized spec for the life of the
/// process, and factories registered at run time beside the inventory's.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/spec.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace roster {

namespace detail {
// Bumped by rescan(); circuits() re-scans when its snapshot is older.
ROSTER_API ROSTER_INLINE std::atomic<std::uint64_t>& scan_generation() noexcept;
/// Returns the cached device of a parsed spec, opening it on the first
/// request (get_device without the parse); `text` is the caller's spelling,
/// remembered for get_device's hit path when given.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> cached_device(const device_spec& spec,
                                                                        std::string_view text = {}) noexcept;
}  // namespace detail

/// Returns the cached device for a spec ("CPU", "cuda:1", " Vulkan:0 "), opening
/// it with roster::acquire on the first request. The spec is normalized first
/// (type lower case, ordinal defaulting to 0), so "CUDA" and "cuda:0" are one
/// device. The cache owns the device until the process ends: do not delete it.
/// Concurrent first requests open it once; a hit takes no lock and does not
/// allocate. A failed open is cached too: later calls return the same error
/// without retrying until roster::rescan(). (Named get_device because
/// roster::device is the device class.)
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> get_device(std::string_view spec) noexcept;

/// Forgets cached failures, so the next get_device retries them, and
/// re-enumerates the circuits (their indices may change). Opened devices stay.
ROSTER_API ROSTER_INLINE void rescan() noexcept;

/// The factory of a backend registered at run time: opens adapter `ordinal`.
using factory_fn = expected<std::unique_ptr<device>> (*)(std::uint32_t ordinal);
/// The enumerator of a backend registered at run time: lists its adapters.
using enumerator_fn = expected<std::vector<adapter_info>> (*)();

/// Registers a backend at run time under a type name (case-insensitive; stored
/// lower case), beside the backends of the inventory: specs, get_device,
/// acquire, registered_backends and circuits see it. Implies rescan(). A name
/// already taken is an errc::conflict error. The enumerator may be null (the
/// backend then adds no adapters to circuits). The factory must not throw;
/// roster guards it anyway.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> register_factory(std::string_view type_name, factory_fn factory,
                                                                       enumerator_fn enumerator,
                                                                       int rank = unranked) noexcept;

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/devices/device_cache-inl.hpp>
#endif
