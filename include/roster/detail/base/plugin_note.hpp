#pragma once
// Private: the mark ROSTER_REGISTER_BACKEND leaves in a module's file, so
// load_plugin can tell a roster plugin (and its plugin ABI) from any other
// shared object by reading the file, before dlopen runs any of its code.

#include <cstdint>

namespace roster::detail {

/// The version of the contract between roster and a backend plugin (the
/// backend_registration layout, the inventory's section and hub, and every
/// type and inline function of the headers a plugin includes). A plugin
/// built for another version is refused, not opened.
inline constexpr std::uint32_t plugin_abi_version = 6;

/// The SHA-256 of the plugin-facing headers when plugin_abi_version was last
/// checked: tests/reliability/plugin_abi_check.py (test 'plugin_abi_headers')
/// names the headers and fails when they change, until plugin_abi_version is
/// bumped (if the ABI changed) and the new hash recorded with its --record.
inline constexpr char plugin_abi_headers_sha256[] = "49b526790773db49b2397ac4ce0c37d0e4d40ee5d8daab446c7aba33681de69a";

/// One record in the section named plugin_note_section: every translation
/// unit that registers a backend adds one.
struct plugin_note {
  char magic[8];          // plugin_note_magic
  std::uint32_t abi;      // plugin_abi_version of the headers it was built with
  std::uint32_t size;     // sizeof(plugin_note), a second check of the layout
};

inline constexpr char plugin_note_section[] = "roster_plugin_abi";
inline constexpr char plugin_note_magic[8] = {'r', 'o', 's', 't', 'e', 'r', 'p', 'l'};

}  // namespace roster::detail

// One plugin_note in the module, kept through --gc-sections and LTO.
#define ROSTER_IMPL_PLUGIN_NOTE(name)                                                                   \
  [[gnu::used, gnu::retain, gnu::section("roster_plugin_abi"), gnu::aligned(4)]] static constinit const \
      ::roster::detail::plugin_note name {                                                              \
    {'r', 'o', 's', 't', 'e', 'r', 'p', 'l'}, ::roster::detail::plugin_abi_version,                    \
        static_cast<std::uint32_t>(sizeof(::roster::detail::plugin_note))                               \
  }
