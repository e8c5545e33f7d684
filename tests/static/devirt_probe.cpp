// Compiled to assembly by the static-no-virtual-call test: static dispatch on
// a final device type must contain no indirect call; the control, a dispatch
// through roster::device&, must contain one (so the check can see them).
#include "fake_backend.hpp"

#include <roster/static_registry.hpp>

roster::expected<void> roster_probe_static(roster_test::fake_device& d, const roster::program& p) {
  return roster::dispatch_static(d, p);
}

roster::expected<void> roster_probe_virtual(roster::device& d, std::span<const roster::step> steps) {
  return d.dispatch_steps(steps);
}
