// What a file of an HPC code pays to include roster header-only.
#define ROSTER_HEADER_ONLY
#include <roster/roster.hpp>
