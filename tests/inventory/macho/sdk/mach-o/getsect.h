/* The declaration of Apple's <mach-o/getsect.h> that roster's Mach-O module
   walk uses, as the macOS SDK spells it (64-bit). Not Apple's file. */
#pragma once
#include <stdint.h>
#include <mach-o/loader.h>

#ifdef __cplusplus
extern "C" {
#endif
extern uint8_t* getsectiondata(const struct mach_header_64* mhp, const char* segname, const char* sectname,
                               unsigned long* size);
#ifdef __cplusplus
}
#endif
