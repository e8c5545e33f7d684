// Must not compile: ROSTER_SOURCE (roster compiled in this file, once) and
// ROSTER_HEADER_ONLY (compiled inline in every file) together.
#define ROSTER_HEADER_ONLY
#define ROSTER_SOURCE
#include <roster/roster.hpp>
int main() { return 0; }
