// The device layer over the real CPU backend: specs, the host-CPU circuit
// merging with a software GPU on the CPU, and the fallback by spec.

#include "test_backends.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace {
using namespace devices_test;

bool traced(std::string_view needle) {
  for (const auto& l : roster::trace_lines())
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TEST(cpu_backend, spellings_of_cpu_are_one_cached_device) {
  auto a = roster::get_device("CPU");
  ASSERT_TRUE(a) << a.error().message();
  auto b = roster::get_device(" cpu:0 ");
  ASSERT_TRUE(b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*a)->adapter().backend, "cpu");
  auto missing = roster::get_device("cpu:7");
  ASSERT_FALSE(missing);
  EXPECT_FALSE(missing.error().fix().empty());
}

TEST(cpu_backend, a_software_gpu_on_the_cpu_joins_the_host_cpu_circuit) {
  register_test_backends();
  unsetenv("ROSTER_DEVICE_SELECTOR");
  // A lavapipe-like adapter: type cpu, its own UUID, no PCI address.
  auto lavapipe = make_adapter(backend_b, roster::device_type::cpu, 7, "", "llvmpipe (LLVM 15.0.6, 256 bits)");
  auto gpu = make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0");
  set_adapters<0>({gpu});
  set_adapters<1>({lavapipe});
  roster::rescan();
  auto cs = roster::circuits();
  ASSERT_TRUE(cs) << cs.error().message();
  ASSERT_EQ(cs->size(), 2u);
  const roster::circuit& host = (*cs)[1];
  EXPECT_EQ(host.type(), roster::device_type::cpu);
  std::vector<std::string> specs{host.adapter.spec()};
  for (const auto& a : host.alternates) specs.push_back(a.spec());
  EXPECT_NE(std::find(specs.begin(), specs.end(), "cpu:0"), specs.end());
  EXPECT_NE(std::find(specs.begin(), specs.end(), lavapipe.spec()), specs.end());
  EXPECT_EQ(specs.size(), 2u);
  set_adapters<0>({});
  set_adapters<1>({});
}

TEST(cpu_backend, the_fallback_opens_the_cpu_by_spec_when_the_selector_drops_everything) {
  setenv("ROSTER_DEVICE_SELECTOR", "!*:*", 1);
  roster::rescan();
  auto cs = roster::circuits();
  ASSERT_TRUE(cs);
  EXPECT_TRUE(cs->empty());
  roster::device* d = roster::try_auxiliary_device();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->adapter().backend, "cpu");
  EXPECT_TRUE(traced("chose cpu:0 (the host CPU, by spec)"));
  unsetenv("ROSTER_DEVICE_SELECTOR");
  roster::rescan();
}


// Strict mode on a machine with no GPU: ROSTER_REQUIRE=gpu is an error at
// every entry point, never the host CPU the fallback chain would give.
TEST(cpu_backend, strict_mode_refuses_the_cpu) {
  register_test_backends();
  unsetenv("ROSTER_DEVICE_SELECTOR");
  unsetenv("ROSTER_DEVICE");
  set_adapters<0>({});
  set_adapters<1>({});
  set_adapters<2>({});
  setenv("ROSTER_REQUIRE", "gpu", 1);
  roster::rescan();
  auto cs = roster::circuits();
  ASSERT_TRUE(cs) << cs.error().message();
  EXPECT_TRUE(cs->empty());
  EXPECT_TRUE(traced("is not 'gpu'"));
  auto d = roster::default_device();
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::unavailable);
  EXPECT_NE(d.error().message().find("ROSTER_REQUIRE='gpu'"), std::string::npos) << d.error().message();
  EXPECT_FALSE(d.error().fix().empty());
  auto b = roster::bind_rank();
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("strict mode"), std::string::npos) << b.error().message();
  EXPECT_EQ(roster::try_primary_device(), nullptr);
  EXPECT_EQ(roster::try_auxiliary_device(), nullptr);
  auto a = roster::acquire("cpu");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("is not 'gpu'"), std::string::npos) << a.error().message();

  // ROSTER_REQUIRE=cpu is satisfied by the CPU; a malformed word is an error.
  setenv("ROSTER_REQUIRE", "cpu", 1);
  roster::rescan();
  EXPECT_TRUE(roster::acquire("cpu"));
  ASSERT_TRUE(roster::circuits());
  EXPECT_EQ(roster::circuits()->size(), 1u);
  setenv("ROSTER_REQUIRE", "gpu;cuda", 1);
  roster::rescan();
  auto bad = roster::circuits();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'gpu;cuda' is not a requirement"), std::string::npos) << bad.error().message();
  unsetenv("ROSTER_REQUIRE");
  roster::rescan();
}

// Case 31 (docs/hostile.md): 'gpu,,cpu' was reported as holding with no
// circuit, and the typo 'gpus' was taken as a backend id no adapter has.
// An empty word, or one that is neither a device type nor a registered
// backend, is an error naming it, with the valid words in the Fix.
TEST(cpu_backend, requirement_refuses_empty_and_unknown_words) {
  register_test_backends();
  unsetenv("ROSTER_DEVICE_SELECTOR");
  struct bad {
    const char* value;
    const char* named;
  };
  for (auto [value, named] : {bad{"gpu,,cpu", "'' is an empty word"}, bad{"gpu,", "'' is an empty word"},
                              bad{"gpus", "'gpus' is not a requirement: neither a device type nor a backend"},
                              bad{"cpu, Discrete ,nonesuch", "'nonesuch' is not a requirement"}}) {
    setenv("ROSTER_REQUIRE", value, 1);
    roster::rescan();
    auto cs = roster::circuits();
    ASSERT_FALSE(cs) << value << ": " << cs->size() << " circuits";
    EXPECT_EQ(cs.error().code(), roster::errc::invalid_argument);
    EXPECT_NE(cs.error().what().find(std::string("ROSTER_REQUIRE='") + value + "': " + named), std::string::npos)
        << cs.error().message();
    // The Fix lists the valid words: the types and the backends registered here.
    EXPECT_NE(cs.error().fix().find("gpu, discrete, integrated, virtual, cpu"), std::string::npos)
        << cs.error().message();
    EXPECT_NE(cs.error().fix().find(std::string(", ") + backend_b), std::string::npos) << cs.error().message();
    auto a = roster::acquire("cpu");
    ASSERT_FALSE(a) << value;
    EXPECT_NE(a.error().message().find(named), std::string::npos) << a.error().message();
  }
  // A registered backend's id, in any case, is a requirement.
  setenv("ROSTER_REQUIRE", (std::string("CPU,") + backend_b).c_str(), 1);
  roster::rescan();
  EXPECT_TRUE(roster::circuits());
  unsetenv("ROSTER_REQUIRE");
  roster::rescan();
}

}  // namespace
