// libroster's inventory alone: the hub and its module walk, compiled once.
// scripts/test-windows builds it as a DLL (Windows) and a dylib (Mach-O),
// where the rest of libroster does not build yet.
#include <roster/detail/inventory/inventory-inl.hpp>
