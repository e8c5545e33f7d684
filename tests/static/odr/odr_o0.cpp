// Built with -O0 -fno-inline: roster's inline functions are emitted here, out of line.
#include "odr_probe-inl.hpp"

odr_test::view odr_test::probe_o0() { return probe_body(); }
