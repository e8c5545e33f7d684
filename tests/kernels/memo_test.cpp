// device::kernel_for remembers its answers per thread (the call's address
// picks the slot). These tests change everything an answer depends on, in
// place at one address, and check that each change gets its own answer: the
// call's variant, op and element type, the device's tuning choices and the
// call's size class under them, another device, and the kernel inventory
// (a module's kernel, forgotten when the module closes).
#include <roster/backends/cpu.hpp>
#include <roster/kernels.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../inventory/module_loader.hpp"

namespace {

template <int Mark>
void mark(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  double* out = a.data<double>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = Mark;
}
constinit const roster::kernel_entry memo_one =
    roster::cpu::kernel<&mark<1>, roster::write<double>>("memo_mark", "one", roster::default_variant);
constinit const roster::kernel_entry memo_two =
    roster::cpu::kernel<&mark<2>, roster::write<double>>("memo_mark", "two", roster::other_variant);
constinit const roster::kernel_entry memo_other =
    roster::cpu::kernel<&mark<3>, roster::write<double>>("memo_other", "three", roster::default_variant);
ROSTER_KERNEL(memo_one);
ROSTER_KERNEL(memo_two);
ROSTER_KERNEL(memo_other);

std::unique_ptr<roster::device> open_cpu() {
  auto d = roster::open_as<roster::cpu::backend>();
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::unique_ptr<roster::device>(std::move(*d)) : nullptr;
}

// The variant kernel_for answers for c on d, or "error: ..." with its message.
std::string variant_for(const roster::device& d, const roster::kernel_call& c) {
  auto k = d.kernel_for(c);
  return k ? std::string((*k)->variant) : "error: " + k.error().message();
}

roster::kernel_choice choice(std::string op, std::uint32_t size_class, std::string variant) {
  roster::kernel_choice c;
  c.op = std::move(op);
  c.size_class = size_class;
  c.variant = std::move(variant);
  return c;
}

TEST(KernelMemo, AChangedCallAtTheSameAddressGetsItsOwnAnswer) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto a = d->allocate<double>(1000);
  auto f = d->allocate<float>(1000);
  ASSERT_TRUE(a && f);
  roster::kernel_call c;
  c.op = "memo_mark";
  c.buffers = {*a};
  EXPECT_EQ(variant_for(*d, c), "one");  // the default, looked up
  EXPECT_EQ(variant_for(*d, c), "one");  // and again, remembered
  c.variant = "two";
  EXPECT_EQ(variant_for(*d, c), "two");
  c.variant = "";
  EXPECT_EQ(variant_for(*d, c), "one");
  c.variant = "none_such";
  EXPECT_NE(variant_for(*d, c).find("error: no variant 'none_such'"), std::string::npos) << variant_for(*d, c);
  c.variant = "";
  c.op = "memo_other";
  EXPECT_EQ(variant_for(*d, c), "three");
  c.op = "memo_mark";
  c.buffers = {*f};  // no float kernel of memo_mark
  EXPECT_NE(variant_for(*d, c).find("error: no kernel for op 'memo_mark' over float"), std::string::npos)
      << variant_for(*d, c);
}

TEST(KernelMemo, ChoicesTheirSizeClassAndAnotherDeviceGetTheirOwnAnswer) {
  auto d = open_cpu();
  auto e = open_cpu();
  ASSERT_TRUE(d && e);
  auto a = d->allocate<double>(1000);
  auto b = e->allocate<double>(1000);
  ASSERT_TRUE(a && b);
  roster::kernel_call c;
  c.op = "memo_mark";
  c.buffers = {*a};
  EXPECT_EQ(variant_for(*d, c), "one");
  static const roster::kernel_choice choices[] = {choice("memo_mark", roster::size_class(1000), "two")};
  d->use_kernel_choices(choices);
  EXPECT_EQ(variant_for(*d, c), "two");  // by record
  EXPECT_EQ(variant_for(*d, c), "two");
  c.extent = 100;  // another size class: no record, the default
  EXPECT_EQ(variant_for(*d, c), "one");
  c.extent = 0;
  EXPECT_EQ(variant_for(*d, c), "two");
  c.buffers = {*b};
  EXPECT_EQ(variant_for(*e, c), "one");  // the other device has no record
  c.buffers = {*a};
  d->use_kernel_choices({});
  EXPECT_EQ(variant_for(*d, c), "one");
  // And what runs is what kernel_for says.
  d->use_kernel_choices(choices);
  roster::program p;
  p.call("memo_mark", {*a});
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(d->dispatch(p));
    std::vector<double> host(1000);
    ASSERT_TRUE(d->download(*a, std::span<double>(host)));
    EXPECT_EQ(host[999], 2.0) << round;
    d->use_kernel_choices({});
    ASSERT_TRUE(d->dispatch(p));
    ASSERT_TRUE(d->download(*a, std::span<double>(host)));
    EXPECT_EQ(host[999], 1.0) << round;
    d->use_kernel_choices(choices);
  }
}

TEST(KernelMemo, AModulesKernelIsForgottenWhenTheModuleCloses) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto a = d->allocate<double>(16);
  ASSERT_TRUE(a);
  roster::kernel_call c;
  c.op = "memo_module_mark";
  c.buffers = {*a};
  EXPECT_NE(variant_for(*d, c).find("error: "), std::string::npos);
  void* module = inv_test::open_module(ROSTER_TEST_KERNEL_MODULE);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(variant_for(*d, c), "only");
  EXPECT_EQ(variant_for(*d, c), "only");  // remembered
  {
    roster::program p;
    p.call("memo_module_mark", {*a});
    ASSERT_TRUE(d->dispatch(p));
    std::vector<double> host(16);
    ASSERT_TRUE(d->download(*a, std::span<double>(host)));
    EXPECT_EQ(host[15], 5.0);
  }
  ASSERT_TRUE(inv_test::close_module(module));
  ASSERT_FALSE(inv_test::module_loaded(ROSTER_TEST_KERNEL_MODULE)) << "the module stayed mapped";
  // The remembered entry lay in the module: the inventory's new snapshot
  // makes kernel_for look again, and find nothing.
  EXPECT_NE(variant_for(*d, c).find("error: no kernel for op 'memo_module_mark'"), std::string::npos)
      << variant_for(*d, c);
}

}  // namespace
