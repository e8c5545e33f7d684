#pragma once
// Private: the object format's module walk, one file per format; included
// by the inventory's out-of-line code only.

#if defined(_WIN32)
#  include <roster/detail/inventory/platform/pe_modules.hpp>
#elif defined(__APPLE__)
#  include <roster/detail/inventory/platform/macho_modules.hpp>
#else
#  include <roster/detail/inventory/platform/elf_modules.hpp>
#endif
