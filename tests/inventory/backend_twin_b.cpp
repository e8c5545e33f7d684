// A second backend registration with the id "twin", from another unit.
#include <roster/backend.hpp>

namespace {
constexpr roster::backend_registration twin{"twin", nullptr, nullptr};
}  // namespace
ROSTER_SUBMIT(roster::backend_registration, twin);
