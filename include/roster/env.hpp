#pragma once
/// The environment, read one way everywhere: roster's core and every backend
/// read their variables through these functions, with one parser per kind of
/// value and one error for a malformed one (it quotes the variable and the
/// value and ends with a Fix:), as systemd's parse_boolean serves every unit.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string>
#include <string_view>

namespace roster::env {

/// Returns the variable's value, or nullopt when it is unset.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<std::string_view> text(const char* name) noexcept;

/// Parses a boolean word: 1, true, yes, on / 0, false, no, off (any case,
/// surrounding spaces ignored); nullopt for anything else.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<bool> parse_flag(std::string_view text) noexcept;

/// Returns a boolean variable: nullopt when unset or blank, its value for a
/// word parse_flag knows, an errc::invalid_argument error otherwise.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<bool>> flag(const char* name);

/// Returns a whole-number variable in [min, max]: nullopt when unset or blank,
/// an error when it is not a decimal whole number in range.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<std::uint64_t>> whole_number(const char* name,
                                                                                        std::uint64_t min,
                                                                                        std::uint64_t max);

/// Returns which of `choices` a variable names (compared without case, spaces
/// trimmed), as an index: nullopt when unset or blank, an error naming the
/// choices otherwise.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<std::size_t>> choice(
    const char* name, std::initializer_list<std::string_view> choices);

/// Returns a variable that names a library roster hands to dlopen (the
/// Vulkan and OpenCL loaders): nullopt when unset or blank; the value when it
/// is a library name without '/' (the dynamic linker searches its folders),
/// the path of a regular file (or a link to one), or a path to nothing
/// (dlopen then says what is missing). A folder, a FIFO, a device or a
/// socket is an errc::invalid_argument error naming the variable, with `fix`
/// as its Fix, before dlopen sees it: dlopen blocks for ever on a FIFO, and
/// misreads the others. The one check of every such variable.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<std::string>> library(const char* name,
                                                                                  std::string_view fix);

/// Returns text from outside roster (an environment value, a file name, a
/// driver's or a plugin's word) fit to print on one line: control bytes and
/// bytes that are not UTF-8 escaped as \n, \xNN (systemd's cescape), cut past
/// `limit` bytes with the size said. Every message of roster prints such
/// text through it, so a newline in a value cannot forge a line of its own.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string printable(std::string_view text, std::size_t limit = 256);

}  // namespace roster::env

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/base/env-inl.hpp>
#endif
