#pragma once
// What one header-only translation unit sees of roster's process-wide state;
// the ODR test compiles the same probe twice with different optimisation and
// inlining and checks that both units see one state.

#include <string>

namespace odr_test {

struct view {
  const void* backends = nullptr;   // registered_backends()'s first registration
  const void* circuits = nullptr;   // circuits()->data()
  const void* device = nullptr;     // get_device("cpu")
  const void* primary = nullptr;    // try_primary_device()
  unsigned long long generation = 0;
  double triad = 0;                 // a[0] after a triad on the cached device
  std::string bad_spec;             // the message of a spec with an unknown type
};

view probe_o0();  // odr_o0.cpp: -O0 -fno-inline
view probe_o2();  // odr_o2.cpp: -O2

}  // namespace odr_test
