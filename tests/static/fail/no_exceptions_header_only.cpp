// Must not compile, with one line that says why: roster's code (header-only,
// or ROSTER_SOURCE) catches exceptions, and -fno-exceptions gave 25 errors
// from inside its files.
#define ROSTER_HEADER_ONLY
#include <roster/roster.hpp>
int main() { return 0; }
