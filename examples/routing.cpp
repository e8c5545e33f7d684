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

  // The decision alone, without opening anything:
  roster::decision_request want;
  want.program = &p;                              // or want.ops / want.type, or nothing: any device
  auto d = roster::decide(want);                  // d->spec, d->reasons, d->passed
  if (!d) return std::fprintf(stderr, "%s\n", d.error().message().c_str()), 1;
  std::printf("decided: %s\n", d->spec.str().c_str());

  // With the program built, route by the program itself:
  auto routed = roster::acquire_preferred(p);   // routed->device, ->backend, ->decision (with reasons)
  if (!routed) return std::fprintf(stderr, "%s\n", routed.error().message().c_str()), 1;
  show("by program", *routed);
  if (routed->device->adapter().spec() != d->spec.str())  // one decision: the router opens what decide() names
    return std::fprintf(stderr, "decide() named %s, the router opened %s\n", d->spec.str().c_str(),
                        routed->device->adapter().spec().c_str()), 1;
  // Output that did not reach its file (a full disk, a closed pipe) is a failure.
  if (std::fflush(stdout) != 0) return std::perror("routing: standard output"), 1;
  return dev.dispatch(p) ? 0 : 1;
}
