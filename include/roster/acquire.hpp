#pragma once
/// The one open path. roster::acquire(spec) parses a spec once, finds its
/// backend and opens through detail::open, the one door every public way to
/// open a device ends in (the device cache, circuits, roles, the router, the
/// static registry): it calls the backend's factory with the only key that
/// can, refuses an adapter a vendor mask hides or that falls short of
/// ROSTER_REQUIRE, and applies the wrappers.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>
#include <roster/spec.hpp>
#include <roster/split.hpp>
#include <roster/tuning/record.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// How acquire opens a device.
struct acquire_options {
  /// Apply the grid-sync split even where the device has native grid sync.
  bool force_split = false;
  /// Apply wrappers at all; false gives the device exactly as its backend
  /// opened it (e.g. to measure its native grid sync).
  bool wrap = true;
  /// Tuning records for the device: its current record's kernel variant
  /// choices and the program shapes it measured faster through the grid-sync
  /// split. The span must outlive the device. Empty: none; acquire itself
  /// never reads a tuning file (roster::current_tuning does, when asked).
  std::span<const tuning_record> tuning{};
};

/// Applies the wrappers a device needs (today: the grid-sync split when it
/// lacks native grid sync, or for the program shapes its record in
/// options.tuning measured faster cut), and gives it that record's kernel
/// variant choices. To add a wrapper, add one `if` here and a test.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::unique_ptr<device> apply_wrappers(std::unique_ptr<device> d,
                                                                              const acquire_options& options = {});

/// Opens the adapter a spec names ("cpu", "cuda:1"), with its wrappers. Every
/// call opens a new device that the caller owns; roster::get_device(spec)
/// returns a cached one, shared by the process.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::unique_ptr<device>> acquire(
    std::string_view spec, const acquire_options& options = {});

/// Opens adapter `ordinal` of backend type B through the one open path (its
/// checks, no wrapper) as B's own device class, for code that calls that
/// class directly: static dispatch (it splits a program at its grid_syncs
/// itself where the device has no native grid sync), a backend's own settings.
template <backend B>
[[nodiscard]] expected<std::unique_ptr<typename B::device_type>> open_as(std::uint32_t ordinal = 0) noexcept;

/// Returns the ids of the registered backends, comma-separated, for messages.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string known_backends();

/// An adapter a vendor mask hides, and why ("CUDA_VISIBLE_DEVICES=1 leaves out ...").
struct hidden_adapter {
  adapter_info adapter;
  std::string reason;
};

/// What the vendor masks (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
/// HIP_VISIBLE_DEVICES, ZE_AFFINITY_MASK: the scheduler's word, for every
/// API) make of a list of adapters, judged as acquire and circuits judge it.
struct mask_view {
  std::vector<adapter_info> visible;   ///< the adapters no mask hides, in the given order
  std::vector<hidden_adapter> hidden;  ///< the adapters a mask hides, in the given order
  std::vector<std::string> notes;      ///< what the masks could not follow (a malformed value, an entry naming no device)
};

/// Applies the vendor masks to adapters (any backend's; an adapter's own
/// backend id decides which mask judges it). With no mask set, every adapter
/// is visible and nothing is read.
[[nodiscard]] ROSTER_API ROSTER_INLINE mask_view apply_vendor_masks(std::vector<adapter_info> adapters);

/// Whether a word of ROSTER_REQUIRE names a kind of device ("gpu",
/// "discrete", "integrated", "virtual", "cpu", in any case) rather than a
/// backend id.
[[nodiscard]] ROSTER_API ROSTER_INLINE bool is_device_kind(std::string_view word) noexcept;

/// Reads ROSTER_REQUIRE (strict mode): nullopt when unset or blank, its
/// trimmed text when every word parses, else the error naming the word.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<std::string>> requirement_from_env();

namespace detail {
/// The one door: opens adapter `spec.ordinal` of `backend` (whose id is
/// spec.backend) through its factory, guarded, refuses it when a vendor mask
/// hides it or it falls short of ROSTER_REQUIRE, and applies the wrappers.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::unique_ptr<device>> open(const backend_registration& backend,
                                                                              const device_spec& spec,
                                                                              const acquire_options& options) noexcept;
/// Finds the backend a parsed spec names (case-insensitive), or the error
/// that lists the known ones.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<const backend_registration*> backend_for(const device_spec& spec);
}  // namespace detail

template <backend B>
expected<std::unique_ptr<typename B::device_type>> open_as(std::uint32_t ordinal) noexcept {
  using D = typename B::device_type;
  acquire_options options;
  options.wrap = false;
  try {
    auto d = detail::open(detail::registration_of<B>, device_spec{std::string(B::id), ordinal}, options);
    if (!d) return std::move(d).error();
    return std::unique_ptr<D>(static_cast<D*>(d->release()));  // registration_of<B> opens a D
  } catch (...) {  // the spec's text
    return make_error(errc::out_of_memory, "out of memory", "free memory");
  }
}

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/open/acquire-inl.hpp>
#endif
