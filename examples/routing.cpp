// Lets roster route a program: roster::acquire_preferred opens the adapter
// roster::decide() chooses for it (the primary circuit's, the rank's under an
// MPI launcher, moving on only when that one cannot run the program). Prints
// the choice, every reason, and why other adapters were passed over.
#include <roster/roster.hpp>

#include <cstdio>
#include <string>

static void show(const char* what, const roster::routed_device& r) {
  std::printf("%s: %s (%s)\n", what, r.device->adapter().spec().c_str(), r.device->adapter().name.c_str());
  for (const auto& why : r.decision.reasons) std::printf("  %s\n", why.c_str());
  for (const auto& p : r.decision.passed) std::printf("  passed over %s: %s\n", p.spec.c_str(), p.reason.c_str());
}

int main() {
  // Before any buffer exists, route by the ops and element type:
  auto fresh = roster::acquire_preferred(roster::op_set::of({roster::op::fill, roster::op::triad}),
                                         roster::element_type::f64);
  if (!fresh) return std::fprintf(stderr, "%s\n", fresh.error().message().c_str()), 1;
  show("by ops", *fresh);

  auto& dev = *fresh->device;
  auto a = dev.allocate<double>(1000), b = dev.allocate<double>(1000), c = dev.allocate<double>(1000);
  if (!a || !b || !c) return 1;
  roster::program p;
  p.fill(*b, 1.0).fill(*c, 2.0).grid_sync().triad(*a, *b, *c, 3.0);

  // With the program built, route by the program itself:
  auto routed = roster::acquire_preferred(p);   // routed->device, ->backend, ->decision (with reasons)
  if (!routed) return std::fprintf(stderr, "%s\n", routed.error().message().c_str()), 1;
  show("by program", *routed);
  return dev.dispatch(p) ? 0 : 1;
}
