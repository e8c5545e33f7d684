#pragma once
/// The decision of where to run: the router (acquire_preferred), which opens
/// the device that runs a program.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>

#include <memory>
#include <string>
#include <vector>

namespace roster {

/// A backend the router did not choose, and why.
struct passed_over {
  std::string backend;
  std::string reason;
};

/// The router's choice.
struct routed_device {
  std::unique_ptr<roster::device> device;
  std::string backend;
  std::vector<passed_over> passed;  ///< lower-rank backends passed over, in rank order
};

/// Opens (with roster::acquire) the lowest-rank backend that dispatches on this
/// host, runs every op of the program, and opens; says why each other backend
/// was passed over.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p);
/// Opens the preferred device for programs of these ops and element type,
/// before any buffer exists (the program overload needs buffers of some device).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<routed_device> acquire_preferred(op_set ops, element_type type);

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/decide-inl.hpp>
#endif
