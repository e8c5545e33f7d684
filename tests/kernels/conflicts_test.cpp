// check_kernels() on an inventory that breaks its rules, one binary per
// broken rule (the inventory is the whole process's): two entries with one
// key, two defaults for one op, backend and type, two signatures for one op
// and type. KERNELS_CONFLICT picks the rule.
#include <roster/kernels.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

void nothing(const roster::kernel_args&, std::size_t, std::size_t) {}
void other(const roster::kernel_args&, std::size_t, std::size_t) {}

#if KERNELS_CONFLICT == 1  // one key twice
constinit const roster::kernel_entry first =
    roster::kernel_entry_of<roster::write<float>>("twice", "cpu", "plain", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&nothing>));
constinit const roster::kernel_entry second =
    roster::kernel_entry_of<roster::write<float>>("twice", "cpu", "plain", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&other>));
#elif KERNELS_CONFLICT == 2  // two defaults
constinit const roster::kernel_entry first =
    roster::kernel_entry_of<roster::write<float>>("defaults", "cpu", "a", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&nothing>));
constinit const roster::kernel_entry second =
    roster::kernel_entry_of<roster::write<float>>("defaults", "cpu", "b", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&other>));
#else  // two signatures
constinit const roster::kernel_entry first =
    roster::kernel_entry_of<roster::write<float>>("shapes", "cpu", "a", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&nothing>));
constinit const roster::kernel_entry second =
    roster::kernel_entry_of<roster::write<float>, roster::scalar<float>>("shapes", "cpu", "b", roster::other_variant, roster::payload_of(&roster::host_kernel_of<&other>));
#endif
ROSTER_KERNEL(first);
ROSTER_KERNEL(second);

TEST(KernelConflicts, CheckKernelsReportsTheBrokenRule) {
  auto ok = roster::check_kernels();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::conflict);
  EXPECT_FALSE(ok.error().fix().empty());
  const std::string m = ok.error().message();
#if KERNELS_CONFLICT == 1
  EXPECT_NE(m.find("two kernels share one op, backend, type and variant"), std::string::npos) << m;
  EXPECT_NE(m.find("conflicts_test.cpp"), std::string::npos) << m;  // both sites named
  EXPECT_EQ(roster::kernels_of("twice").size(), 1u);               // one kept
#elif KERNELS_CONFLICT == 2
  EXPECT_NE(m.find("variants 'a' and 'b' are both the default"), std::string::npos) << m;
#else
  EXPECT_NE(m.find("takes (write float buffer) but variant 'b' on cpu takes (write float buffer, float scalar)"),
            std::string::npos)
      << m;
#endif
}

}  // namespace
