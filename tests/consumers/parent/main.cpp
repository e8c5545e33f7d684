#include <roster/roster.hpp>

int main() { return roster::registered_backends().empty() ? 0 : 0; }
