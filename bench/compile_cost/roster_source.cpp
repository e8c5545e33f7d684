// What the one file of a program that defines ROSTER_SOURCE pays: roster's
// bodies, compiled once per program.
#define ROSTER_SOURCE
#include <roster/roster.hpp>
