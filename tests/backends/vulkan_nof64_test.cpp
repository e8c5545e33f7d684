// Run with ROSTER_VULKAN_NO_F64=1, which makes the backend treat its adapters
// as lacking shaderFloat64: the adapter and the device say f64 is false, they
// still list every op, float programs run and double ones get a clear error.
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(vulkan_without_f64, adapter_and_device_report_no_f64) {
  auto adapters = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(adapters);
  ASSERT_FALSE(adapters->empty());
  for (const auto& a : *adapters) {
    EXPECT_FALSE(a.f64);
    EXPECT_EQ(a.ops, roster::op_set::all());
  }
  auto d = roster::acquire("vulkan:0");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_FALSE((*d)->caps().f64);
  EXPECT_EQ((*d)->caps().ops, roster::op_set::all());
}

TEST(vulkan_without_f64, double_buffers_are_refused_with_a_fix) {
  auto d = roster::acquire("vulkan:0");
  ASSERT_TRUE(d);
  auto b = (*d)->allocate<double>(64);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code(), roster::errc::unsupported);
  EXPECT_NE(b.error().what().find("double"), std::string_view::npos) << b.error().message();
  EXPECT_FALSE(b.error().fix().empty());
}

TEST(vulkan_without_f64, double_program_is_refused_and_float_runs) {
  auto d = roster::acquire("vulkan:0");
  ASSERT_TRUE(d);
  // A double program naming this device's buffers: the core refuses it.
  roster::buffer fake{(*d)->id(), 1, roster::element_type::f64, 8};
  auto ok = (*d)->dispatch(roster::program().fill(fake, 1.0));
  ASSERT_FALSE(ok);
  EXPECT_FALSE(ok.error().fix().empty());
  auto t = (*d)->timed_dispatch(roster::program().fill(fake, 1.0));
  ASSERT_FALSE(t);
  EXPECT_FALSE(t.error().fix().empty());

  auto a = (*d)->allocate<float>(100), b = (*d)->allocate<float>(100), r = (*d)->allocate<float>(1);
  ASSERT_TRUE(a && b && r);
  auto run = (*d)->dispatch(roster::program().fill(*a, 2.0).fill(*b, 3.0).dot(*r, *a, *b));
  ASSERT_TRUE(run) << run.error().message();
  std::vector<float> h(1);
  ASSERT_TRUE((*d)->download(*r, std::span<float>(h)));
  EXPECT_EQ(h[0], 600.0f);
}

}  // namespace
