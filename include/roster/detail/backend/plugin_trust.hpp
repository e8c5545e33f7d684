#pragma once
// Private: whether a plugin comes from a place only trusted users can write,
// checked before dlopen runs any of its code. As sudo refuses a sudoers file,
// and OpenSSH (StrictModes) an authorized_keys file, that others could have
// changed: a plugin file, its folder and every folder above them must be
// writable by no one but their owner and root, and, while the process runs as
// root, owned by root. A folder above (not the plugin's own) may be writable
// by all when its sticky bit is set (/tmp): then no one but an entry's owner
// can rename or remove it. ROSTER_PLUGIN_ALLOW_INSECURE=1 loads such a plugin
// anyway (and traces why it would have been refused).

#include <roster/error.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace roster::detail {

/// The variable that lets roster load plugins from places others can write.
inline constexpr const char* env_plugin_allow_insecure = "ROSTER_PLUGIN_ALLOW_INSECURE";

// The refusal: what is loose, why that matters, and the Fix.
inline error plugin_trust_error(const std::string& who, const std::string& what, const std::string& fix) {
  return error(errc::invalid_argument,
               who + ": " + what + "; whoever can change it can make this process run their code, so it is not opened",
               fix + ", or set " + env_plugin_allow_insecure + "=1 to load it anyway");
}

// Checks one file or folder of a plugin's path. `own` is the plugin file or
// the folder that holds it: the sticky bit does not excuse it (anyone could
// add a plugin to a sticky folder).
inline std::optional<error> untrusted_entry(const std::string& who, const std::string& path, bool own, uid_t euid) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;  // a missing part fails later, with its own error
  const bool folder = S_ISDIR(st.st_mode);
  const std::string what = folder ? "the folder " + path : "the file";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (own || (st.st_mode & S_ISVTX) == 0))
    return plugin_trust_error(who,
                              what + " is writable by others than its owner and root (mode " + mode + ")",
                              "make it writable by its owner only (chmod go-w '" + path + "')");
  if (euid == 0 && st.st_uid != 0)
    return plugin_trust_error(who,
                              what + " is owned by uid " + std::to_string(st.st_uid) +
                                  " while this process runs as root",
                              "make root its owner (chown root '" + path + "'), or run the program as that user");
  return std::nullopt;
}

// Checks a folder and every folder above it; `own` for the first.
inline std::optional<error> untrusted_folders(const std::string& who, std::string folder, bool own, uid_t euid) {
  while (!folder.empty()) {
    if (auto e = untrusted_entry(who, folder, own, euid)) return e;
    own = false;
    if (folder == "/") break;
    const auto slash = folder.rfind('/');
    folder = slash == std::string::npos ? std::string() : slash == 0 ? std::string("/") : folder.substr(0, slash);
  }
  return std::nullopt;
}

// Returns the real path (links resolved), or the path itself when it has none.
inline std::string real_path_of(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;
  std::string out(real);
  std::free(real);
  return out;
}

/// Returns why the plugin folder (an absolute path) is not a trusted place,
/// or nothing. `euid` is the effective user of the process.
inline std::optional<error> untrusted_plugin_folder(const std::string& folder, uid_t euid = ::geteuid()) {
  return untrusted_folders("plugin folder '" + folder + "'", real_path_of(folder), true, euid);
}

/// Returns why the plugin file (an absolute path) is not trusted, or nothing:
/// the file where its links lead, the folder of the name given (where its
/// entry could be swapped), and every folder above each.
inline std::optional<error> untrusted_plugin(const std::string& file, uid_t euid = ::geteuid()) {
  const std::string who = "plugin '" + file + "'";
  const std::string real = real_path_of(file);
  if (auto e = untrusted_entry(who, real, true, euid)) return e;
  const auto parent = [](const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : p.substr(0, slash);
  };
  const std::string named = real_path_of(parent(file)), holding = parent(real);
  if (auto e = untrusted_folders(who, named, true, euid)) return e;
  if (holding != named)
    if (auto e = untrusted_folders(who, holding, true, euid)) return e;
  return std::nullopt;
}

/// Returns whether a value of ROSTER_PLUGIN_ALLOW_INSECURE lifts the rule:
/// only a plain yes (1, true, yes, on, in any case). Anything else keeps it,
/// "false" and a typo included: this flag fails safe.
constexpr bool allows_insecure(std::string_view value) noexcept { return flag_word(value) == true; }

/// Returns the refusal to act on: the reason when the place is not trusted
/// and ROSTER_PLUGIN_ALLOW_INSECURE does not say yes; when it does, the
/// reason is traced and nothing is refused.
inline std::optional<error> refuse_untrusted(std::optional<error> why) {
  if (!why) return std::nullopt;
  const auto allow = env_text(env_plugin_allow_insecure);
  if (!allow || !allows_insecure(*allow)) {
    if (allow && !trim(*allow).empty() && !flag_word(*allow).has_value())
      return error(why->code(),
                   std::string(why->what()) + " (" + env_plugin_allow_insecure + "='" + std::string(*allow) +
                       "' is not " + std::string(flag_words) + ", so the rule stands)",
                   why->fix());
    return why;
  }
  trace("plugin: loading despite loose permissions (" + std::string(env_plugin_allow_insecure) +
        " is set): " + std::string(why->what()));
  return std::nullopt;
}

}  // namespace roster::detail
