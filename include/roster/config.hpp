#pragma once
/// Build-mode macros shared by every roster header.

// ROSTER_HEADER_ONLY makes the out-of-line code inline and pulls in the
// *-inl.hpp files, so a program can use roster with no library linked.
#if defined(ROSTER_HEADER_ONLY)
#  define ROSTER_INLINE inline
#else
#  define ROSTER_INLINE
#endif

// Process-wide entry points keep default visibility so that the dynamic
// linker unifies them across shared objects, even in header-only mode.
#define ROSTER_API __attribute__((visibility("default")))
// Per-module entry points must stay hidden: each shared object keeps its own.
#define ROSTER_IMPL_HIDDEN __attribute__((visibility("hidden")))

#define ROSTER_IMPL_CAT2(a, b) a##b
#define ROSTER_IMPL_CAT(a, b) ROSTER_IMPL_CAT2(a, b)
#define ROSTER_IMPL_STR2(x) #x
#define ROSTER_IMPL_STR(x) ROSTER_IMPL_STR2(x)
