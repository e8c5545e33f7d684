// Must compile under -fno-exceptions: a file that includes roster in library
// mode holds none of roster's code, so it needs no exceptions.
#include <roster/roster.hpp>
int main() { return 0; }
