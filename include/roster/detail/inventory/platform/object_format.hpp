#pragma once
// Private: the object format's section, markers and per-module hook, one
// file per format.

#if defined(_WIN32)
#  include <roster/detail/platform/pe.hpp>
#elif defined(__APPLE__)
#  include <roster/detail/platform/macho.hpp>
#else
#  include <roster/detail/platform/elf.hpp>
#endif
