// Includes roster below C++20: one clear error must come first.
#include <roster/roster.hpp>

int main() { return 0; }
