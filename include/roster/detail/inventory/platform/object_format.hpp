#pragma once
// Private: the object format's section, markers and per-module hook, one
// file per format.

#if defined(_WIN32)
#  include <roster/detail/inventory/platform/pe.hpp>
#elif defined(__APPLE__)
#  include <roster/detail/inventory/platform/macho.hpp>
#else
#  include <roster/detail/inventory/platform/elf.hpp>
#endif
