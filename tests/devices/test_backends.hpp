#pragma once
// Registry test backends for the devices suite: registered at run time with
// roster::register_factory, each reporting the adapters a test gives it and
// counting how often each adapter is opened.

#include "../support/identity_device.hpp"
#include <roster/roster.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace devices_test {

// A device that does nothing but report its adapter.
using fake_device = roster_test_support::identity_device;

// What one test backend reports and how its adapters open.
struct backend_state {
  std::mutex mutex;
  std::vector<roster::adapter_info> adapters;
  std::map<std::uint32_t, int> opens;          // ordinal -> times opened
  std::vector<std::uint32_t> failing;          // ordinals whose open fails
  bool enumerate_fails = false;
  int enumerations = 0;                        // times the enumerator ran
};

template <int N>
backend_state& state() {
  static backend_state s;
  return s;
}

template <int N>
roster::expected<std::unique_ptr<roster::device>> open_test(std::uint32_t ordinal) {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  ++s.opens[ordinal];
  for (auto f : s.failing)
    if (f == ordinal)
      return roster::make_error(roster::errc::unavailable, "test adapter " + std::to_string(ordinal) + " fails to open",
                                "this is a test");
  for (const auto& a : s.adapters)
    if (a.ordinal == ordinal) return std::unique_ptr<roster::device>(std::make_unique<fake_device>(a));
  return roster::make_error(roster::errc::not_found, "no test adapter " + std::to_string(ordinal),
                            "this is a test");
}

template <int N>
roster::expected<std::vector<roster::adapter_info>> enumerate_test() {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  ++s.enumerations;
  if (s.enumerate_fails)
    return roster::make_error(roster::errc::unavailable, "test enumerator fails", "this is a test");
  return s.adapters;
}

// The registry test backends: a and b are two APIs over the same GPUs (a
// ranks first), host sees the host CPU like a software Vulkan device does.
inline constexpr const char* backend_a = "test_registry_backend_a";
inline constexpr const char* backend_b = "test_registry_backend_b";
inline constexpr const char* backend_host = "test_registry_backend_host";

// Registers the three test backends once per process.
inline void register_test_backends() {
  static const bool once = [] {
    (void)roster::register_factory(backend_a, &open_test<0>, &enumerate_test<0>, 10);
    (void)roster::register_factory(backend_b, &open_test<1>, &enumerate_test<1>, 20);
    (void)roster::register_factory(backend_host, &open_test<2>, &enumerate_test<2>, 30);
    return true;
  }();
  (void)once;
}

// Returns an ordinal no earlier test used, so cached devices never leak between tests.
inline std::uint32_t fresh_ordinal() {
  static std::atomic<std::uint32_t> next{1000};
  return next.fetch_add(1);
}

inline std::array<std::uint8_t, 16> uuid_of(std::uint8_t seed) {
  std::array<std::uint8_t, 16> u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(seed * 16 + i);
  return u;
}

inline roster::adapter_info make_adapter(const char* backend, roster::device_type type, std::uint8_t uuid_seed,
                                         std::string pci, std::string name = "Test GPU") {
  roster::adapter_info a;
  a.backend = backend;
  a.ordinal = fresh_ordinal();
  a.name = std::move(name);
  a.type = type;
  if (uuid_seed != 0) a.uuid = uuid_of(uuid_seed);
  a.pci_address = std::move(pci);
  a.vendor_id = 0x10de;
  a.device_id = 0x2335;
  return a;
}

// Gives backend N its adapters, clears its counters and failures.
template <int N>
void set_adapters(std::vector<roster::adapter_info> adapters) {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  s.adapters = std::move(adapters);
  s.opens.clear();
  s.failing.clear();
  s.enumerate_fails = false;
  s.enumerations = 0;
}

template <int N>
void set_failing(std::vector<std::uint32_t> ordinals) {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  s.failing = std::move(ordinals);
}

template <int N>
int enumerations_of() {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  return s.enumerations;
}

template <int N>
int opens_of(std::uint32_t ordinal) {
  auto& s = state<N>();
  std::lock_guard lock(s.mutex);
  auto it = s.opens.find(ordinal);
  return it == s.opens.end() ? 0 : it->second;
}

}  // namespace devices_test
