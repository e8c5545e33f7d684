// Built with -O2: roster's inline functions are inlined here where GCC chooses.
#include "odr_probe-inl.hpp"

odr_test::view odr_test::probe_o2() { return probe_body(); }
