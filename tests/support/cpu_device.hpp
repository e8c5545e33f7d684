#pragma once
// Opens the CPU backend's own device class through the one open path
// (roster::open_as), with a thread count for this open only.
#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace roster_test {

/// Opens a roster::cpu::device on `threads` threads (0: ROSTER_CPU_THREADS
/// as the environment has it), restoring the variable afterwards.
inline roster::expected<std::unique_ptr<roster::cpu::device>> open_cpu_device(unsigned threads = 0) {
  if (threads == 0) return roster::open_as<roster::cpu::backend>();
  const char* before = std::getenv("ROSTER_CPU_THREADS");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("ROSTER_CPU_THREADS", std::to_string(threads).c_str(), 1);
  auto d = roster::open_as<roster::cpu::backend>();
  if (saved) ::setenv("ROSTER_CPU_THREADS", saved->c_str(), 1);
  else ::unsetenv("ROSTER_CPU_THREADS");
  return d;
}

}  // namespace roster_test
