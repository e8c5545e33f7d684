// A backend registration with the id "twin", for test_backend_conflict.
#include <roster/backend.hpp>

namespace {
constexpr roster::backend_registration twin{"twin", nullptr, nullptr};
}  // namespace
ROSTER_SUBMIT(roster::backend_registration, twin);
