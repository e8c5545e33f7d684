// roster's code and the CPU backend's, compiled once for the whole program.
#define ROSTER_SOURCE
#include <roster/backends/cpu.hpp>  // registers the CPU backend
#include <roster/roster.hpp>
