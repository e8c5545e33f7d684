/* The declarations of Apple's <mach-o/dyld.h> that roster's Mach-O module
   walk uses, as the macOS SDK spells them. Not Apple's file. */
#pragma once
#include <stdint.h>
#include <mach-o/loader.h>

#ifdef __cplusplus
extern "C" {
#endif
extern void _dyld_register_func_for_add_image(void (*func)(const struct mach_header* mh, intptr_t vmaddr_slide));
extern void _dyld_register_func_for_remove_image(void (*func)(const struct mach_header* mh, intptr_t vmaddr_slide));
#ifdef __cplusplus
}
#endif
