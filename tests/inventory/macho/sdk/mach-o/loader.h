/* The declarations of Apple's <mach-o/loader.h> that roster's Mach-O module
   walk uses, as the macOS SDK spells them, so that scripts/test-windows can
   compile the walk on Linux. Not Apple's file. */
#pragma once
#include <stdint.h>

struct mach_header {
  uint32_t magic;
  int32_t cputype;
  int32_t cpusubtype;
  uint32_t filetype;
  uint32_t ncmds;
  uint32_t sizeofcmds;
  uint32_t flags;
};

struct mach_header_64 {
  uint32_t magic;
  int32_t cputype;
  int32_t cpusubtype;
  uint32_t filetype;
  uint32_t ncmds;
  uint32_t sizeofcmds;
  uint32_t flags;
  uint32_t reserved;
};
