#pragma once
/// Build-mode macros shared by every roster header.

// Every public header includes this one first: stop at the first line with
// one readable error rather than hundreds from C++20 features further down.
#if !defined(__cplusplus) || __cplusplus < 202002L
#  error "roster needs C++20: compile with -std=c++20 (Meson: cpp_std=c++20; CMake: cxx_std_20, which roster::roster sets)"
// No such file: a missing include is fatal, so the compile ends here.
#  include <roster/detail/roster-needs-c++20>
#endif

// ROSTER_HEADER_ONLY makes the out-of-line code inline and pulls in the
// *-inl.hpp files, so a program can use roster with no library linked.
// ROSTER_SOURCE, defined in one file of a program, pulls them into that file
// alone, not inline: roster's code is compiled once, the program's other
// files include roster as in library mode, and no library is linked either
// (Boost.JSON's src.hpp, Asio's separate compilation).
#if defined(ROSTER_HEADER_ONLY) && defined(ROSTER_SOURCE)
#  error "ROSTER_HEADER_ONLY and ROSTER_SOURCE are both defined: ROSTER_SOURCE goes in one file alone, ROSTER_HEADER_ONLY in none then"
#endif
#if defined(ROSTER_HEADER_ONLY)
#  define ROSTER_INLINE inline
#else
#  define ROSTER_INLINE
#endif
// Set when the headers pull in their *-inl.hpp files (either switch).
#if defined(ROSTER_HEADER_ONLY) || defined(ROSTER_SOURCE)
#  define ROSTER_IMPL_WITH_INL 1
#endif

// ROSTER_SOURCE in two files of one program defines roster's code twice. This
// symbol, defined by every ROSTER_SOURCE file and emitted before roster's
// functions, makes the linker's first complaint (GNU ld, gold, lld and mold
// alike) name the mistake and its fix rather than one of roster's functions
// (under -flto GCC's linker plugin names roster's functions first, and the
// assembler names this symbol after them). Hidden, so a shared object built
// with ROSTER_SOURCE does not export it; ELF only, where this syntax holds.
#if defined(ROSTER_SOURCE) && defined(__ELF__)
__asm__(".pushsection .rodata.roster_source_once,\"a\",@progbits\n"
        ".globl roster_SOURCE_defined_in_two_files__Fix_define_ROSTER_SOURCE_in_one_file_only\n"
        ".hidden roster_SOURCE_defined_in_two_files__Fix_define_ROSTER_SOURCE_in_one_file_only\n"
        "roster_SOURCE_defined_in_two_files__Fix_define_ROSTER_SOURCE_in_one_file_only: .byte 0\n"
        ".popsection\n");
#endif

// roster's code catches what a backend or the allocator throws: where it is
// compiled in this file, say so once rather than with an error per catch.
#if defined(ROSTER_IMPL_WITH_INL) && !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#  error "roster's code needs C++ exceptions, and this file compiles it (ROSTER_HEADER_ONLY or ROSTER_SOURCE) under -fno-exceptions. Fix: compile this file with exceptions, or link libroster and include roster without ROSTER_HEADER_ONLY (library mode needs none)"
// No such file: a missing include is fatal, so the compile ends here.
#  include <roster/detail/roster-needs-exceptions>
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
