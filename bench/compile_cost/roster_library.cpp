// What a file of an HPC code pays to include roster in library mode.
#include <roster/roster.hpp>
