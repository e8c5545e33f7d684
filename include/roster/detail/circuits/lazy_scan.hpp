#pragma once
// Private: the test hook of the decision's lazy scan (circuits-inl.hpp): which
// backends it may leave unasked, and the machine's GPU list it reads.

#include <roster/config.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace roster::detail {

/// What a test puts in place of the built-in GPU APIs and the machine's list.
struct lazy_scan_testing {
  std::vector<std::string> deferrable;  ///< backend ids a decision may leave unasked
  physical_gpus gpus;                   ///< the machine's GPU list (source empty: unreadable)
};

/// For tests: replaces what the lazy scan defers and reads; nullopt restores
/// the built-in GPU APIs (cuda, vulkan, opencl) and NVML with sysfs. Takes
/// effect at the next scan (call rescan()).
ROSTER_API ROSTER_INLINE void set_lazy_scan_for_testing(std::optional<lazy_scan_testing> t);

/// What set_lazy_scan_for_testing put in place, one per process.
struct lazy_scan_hook {
  std::mutex mutex;
  std::optional<lazy_scan_testing> replaced;
};

/// Returns the process's hook.
ROSTER_API ROSTER_INLINE lazy_scan_hook& the_lazy_scan_hook() noexcept;

}  // namespace roster::detail
