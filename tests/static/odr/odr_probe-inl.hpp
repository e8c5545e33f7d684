#pragma once
// The probe's body, included by both units under a name of each's own.

#include "odr_probe.hpp"

#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <span>
#include <vector>

namespace odr_test {

inline view probe_body() {
  view v;
  if (auto list = roster::registered_backends(); !list.empty()) v.backends = list.front().registration;
  if (auto list = roster::circuits(); list) v.circuits = list->data();
  auto d = roster::get_device("cpu");
  if (!d) return v;
  v.device = *d;
  v.primary = roster::try_primary_device();
  v.generation = roster::detail::scan_generation().load();
  auto a = (*d)->allocate<double>(16);
  auto b = (*d)->allocate<double>(16);
  auto c = (*d)->allocate<double>(16);
  if (a && b && c) {
    roster::program p;
    p.fill(*b, 2.0).fill(*c, 3.0).triad(*a, *b, *c, 0.5);
    std::vector<double> out(16);
    if ((*d)->dispatch(p) && (*d)->download(*a, std::span<double>(out))) v.triad = out[0];
    (void)(*d)->release(*a);
    (void)(*d)->release(*b);
    (void)(*d)->release(*c);
  }
  auto bad = roster::acquire("nonesuch:0");
  if (!bad) v.bad_spec = bad.error().message();
  return v;
}

}  // namespace odr_test
