// The compiled CPU backend: its out-of-line code, once, and its registration
// (through the header) and anchor.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_HEADER_ONLY)
#  include <roster/backends/cpu/detail/cpu-inl.hpp>
#endif

ROSTER_DEFINE_BACKEND_ANCHOR(cpu);
