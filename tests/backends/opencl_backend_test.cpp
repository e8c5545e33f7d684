// The OpenCL backend on whatever OpenCL device the host has (PoCL's CPU
// device in CI, the GPU on a GPU node): registration, adapters, the fusion of
// element-wise steps into one kernel, the dot's two kernels, the kernel
// cache, timing and the error paths. Results of every op in both types are
// the shared op body's job (ops_test.cpp).
#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/backends/opencl.hpp>
#include <roster/backends/opencl/detail/loader.hpp>
#include <roster/backends/opencl/detail/testing.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using roster::buffer;
using roster::program;

std::unique_ptr<roster::device> open_opencl(const char* spec = "opencl:0") {
  auto d = roster::acquire(spec);
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

std::uint64_t kernels() { return roster::opencl::detail::activity_so_far().kernels_enqueued; }
std::uint64_t builds() { return roster::opencl::detail::activity_so_far().programs_built; }

template <class T>
std::vector<T> fetch(roster::device& d, const buffer& b) {
  std::vector<T> v(b.size);
  EXPECT_TRUE(d.download(b, std::span<T>(v)));
  return v;
}

TEST(opencl_backend, registers_with_rank_30_between_vulkan_and_cpu) {
  const auto* reg = roster::find_backend("opencl");
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg->ops, roster::op_set::all());
  EXPECT_EQ(reg->payload_id, roster::opencl::source::payload_id);
  std::vector<std::string> order;
  for (const auto& b : roster::registered_backends()) {
    order.emplace_back(b.id());
    if (b.id() == "opencl") {
      EXPECT_EQ(b.rank, 30);
      EXPECT_TRUE(b.dispatches);
    }
  }
  auto at = [&](const char* id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  ASSERT_LT(at("opencl"), static_cast<long>(order.size()));
  if (at("vulkan") < static_cast<long>(order.size())) {
    EXPECT_LT(at("vulkan"), at("opencl"));
  }
  if (at("cpu") < static_cast<long>(order.size())) {
    EXPECT_LT(at("opencl"), at("cpu"));
  }
}

TEST(opencl_backend, enumerates_adapters_with_identity) {
  auto adapters = roster::opencl::backend::enumerate();
  ASSERT_TRUE(adapters) << adapters.error().message();
  ASSERT_FALSE(adapters->empty()) << "no OpenCL adapter: is pocl-opencl-icd (or a GPU's ICD) installed?";
  for (std::size_t i = 0; i < adapters->size(); ++i) {
    const auto& a = (*adapters)[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.backend, "opencl");
    EXPECT_EQ(a.ordinal, i);
    EXPECT_FALSE(a.name.empty());
    EXPECT_NE(a.vendor_id, 0u);
    EXPECT_GT(a.memory_bytes, 0u);
    EXPECT_GT(a.compute_units, 0u);
    EXPECT_FALSE(a.driver_version.empty());
    EXPECT_FALSE(a.native_grid_sync);
    EXPECT_EQ(a.ops, roster::op_set::all());
    if (a.type == roster::device_type::discrete_gpu) {
      // A GPU driver that offers cl_khr_device_uuid and cl_khr_pci_bus_info (NVIDIA's does).
      EXPECT_TRUE(a.has_uuid());
      EXPECT_EQ(a.pci_address.size(), 12u) << a.pci_address;  // 0000:00:07.0
    }
  }
}

TEST(opencl_backend, pocl_is_a_cpu_adapter_with_f64) {
  auto adapters = roster::opencl::backend::enumerate();
  ASSERT_TRUE(adapters);
  for (const auto& a : *adapters)
    if (a.name.starts_with("pthread-") || a.name.starts_with("cpu-")) {  // PoCL's CPU device
      EXPECT_EQ(a.type, roster::device_type::cpu);
      EXPECT_TRUE(a.f64);
      EXPECT_TRUE(a.software) << "OpenCL in software on the host: it never outranks cpu:0 unmeasured";
      EXPECT_FALSE(a.has_uuid());
      return;
    }
  GTEST_SKIP() << "no PoCL CPU device here";
}

// Element-wise steps between grid syncs are one kernel over every index; a
// dot adds its final sum; each piece of the split is its own kernel.
TEST(opencl_backend, fuses_element_wise_steps_into_one_kernel) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  const std::size_t n = 10007;
  auto a = *dev->allocate<float>(n), b = *dev->allocate<float>(n), c = *dev->allocate<float>(n);
  auto r = *dev->allocate<float>(1);
  program p;
  p.fill(a, 1).fill(b, 2).copy(c, a).mul(b, c, 3).add(c, a, b).triad(a, b, c, 0.5).nstream(a, b, c, 2);
  auto before = kernels();
  ASSERT_TRUE(dev->dispatch(p));
  EXPECT_EQ(kernels() - before, 1u);
  // c = 1, b = 3, c = 4, a = 3 + 2 = 5, a = 5 + 3 + 8 = 16
  for (float x : fetch<float>(*dev, a)) ASSERT_EQ(x, 16.0f);

  program with_dot = p;
  with_dot.dot(r, a, b);
  before = kernels();
  ASSERT_TRUE(dev->dispatch(with_dot));
  EXPECT_EQ(kernels() - before, 2u);  // the pass with the partial sums, the final sum
  EXPECT_EQ(fetch<float>(*dev, r)[0], 48.0f * n);  // a = 16, b = 3 after the same steps

  program split;
  split.fill(a, 1).grid_sync().copy(b, a).grid_sync().dot(r, a, b);
  before = kernels();
  ASSERT_TRUE(dev->dispatch(split));
  EXPECT_EQ(kernels() - before, 4u);
  EXPECT_EQ(fetch<float>(*dev, r)[0], static_cast<float>(n));
}

TEST(opencl_backend, builds_each_program_shape_once) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  auto a = *dev->allocate<float>(100), b = *dev->allocate<float>(100);
  program p;
  p.fill(a, 2).mul(b, a, 0.25);
  ASSERT_TRUE(dev->dispatch(p));
  const auto built = builds();
  program again;  // the same shape with other scalars and lengths
  auto c = *dev->allocate<float>(5000), d = *dev->allocate<float>(5000);
  again.fill(c, 7).mul(d, c, 3);
  ASSERT_TRUE(dev->dispatch(again));
  EXPECT_EQ(builds(), built);
  EXPECT_EQ(fetch<float>(*dev, d)[4999], 21.0f);
  EXPECT_EQ(fetch<float>(*dev, b)[99], 0.5f);
}

// More steps or buffers than one kernel takes: the pass is cut, in order.
TEST(opencl_backend, long_programs_are_cut_into_passes_in_order) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  const std::size_t n = 333;
  auto x = *dev->allocate<double>(n);
  program q;
  q.fill(x, 1);
  for (int i = 0; i < 40; ++i) q.mul(x, x, 1.5);
  auto before = kernels();
  ASSERT_TRUE(dev->dispatch(q));
  EXPECT_EQ(kernels() - before, 3u);  // 41 steps, 16 a pass
  double want = 1;
  for (int i = 0; i < 40; ++i) want *= 1.5;
  for (double v : fetch<double>(*dev, x)) ASSERT_DOUBLE_EQ(v, want);

  // Nine adds over 27 distinct buffers: the first eight (24 buffers) are one
  // kernel, the ninth another.
  std::vector<buffer> a, b, c;
  program fills, adds;
  for (int i = 0; i < 9; ++i) {
    a.push_back(*dev->allocate<double>(n));
    b.push_back(*dev->allocate<double>(n));
    c.push_back(*dev->allocate<double>(n));
    fills.fill(a.back(), i).fill(b.back(), 100);
    adds.add(c.back(), a.back(), b.back());
  }
  ASSERT_TRUE(dev->dispatch(fills));
  before = kernels();
  ASSERT_TRUE(dev->dispatch(adds));
  EXPECT_EQ(kernels() - before, 2u);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(fetch<double>(*dev, c[i])[n - 1], 100 + i);
}

TEST(opencl_backend, a_dot_into_its_own_input_and_a_longer_result) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  const std::size_t n = 4099;
  auto a = *dev->allocate<double>(n), b = *dev->allocate<double>(n), r = *dev->allocate<double>(3);
  program p;
  p.fill(a, 0.5).fill(b, 2).fill(r, -1).dot(a, a, b);
  ASSERT_TRUE(dev->dispatch(p));
  const auto got = fetch<double>(*dev, a);
  EXPECT_EQ(got[0], static_cast<double>(n));
  EXPECT_EQ(got[1], 0.5);
  program q;
  q.dot(r, b, b);
  ASSERT_TRUE(dev->dispatch(q));
  EXPECT_EQ(fetch<double>(*dev, r), (std::vector<double>{4.0 * n, -1, -1}));
}

TEST(opencl_backend, timed_dispatch_measures_on_the_device) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  const std::size_t n = 1 << 20;
  auto a = *dev->allocate<float>(n), b = *dev->allocate<float>(n), r = *dev->allocate<float>(1);
  program p;
  p.fill(a, 1).fill(b, 1).dot(r, a, b);
  auto t = dev->timed_dispatch(p);
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_GT(t->count(), 0);
  EXPECT_EQ(fetch<float>(*dev, r)[0], static_cast<float>(n));
}

TEST(opencl_backend, errors_carry_a_fix) {
  auto dev = open_opencl();
  ASSERT_TRUE(dev);
  // Beyond the largest allocation the device allows (never more than its memory).
  const std::size_t too_many = dev->adapter().memory_bytes / sizeof(float) + 1;
  auto big = dev->allocate<float>(too_many);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), roster::errc::unsupported) << big.error().message();
  EXPECT_NE(big.error().what().find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string_view::npos);
  EXPECT_FALSE(big.error().fix().empty());

  auto none = roster::acquire("opencl:99");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), roster::errc::not_found);
  EXPECT_NE(none.error().fix().find("roster-info"), std::string_view::npos) << none.error().message();
}

// A status that is not OpenCL's (its errors are negative) is the driver's
// own: NVIDIA's OpenCL passes CUDA's 223 when CUDA_DISABLE_PTX_JIT=1 turns
// off the JIT its compiler needs (seen on an H200: clCreateContext failed
// with it). The message says so and how to fix it, not "a roster bug".
TEST(opencl_backend, a_vendor_code_is_named_as_the_drivers_own) {
  const roster::error jit = roster::opencl::detail::cl_failure("opencl:1: open", "clCreateContext", 223);
  EXPECT_EQ(jit.code(), roster::errc::unavailable);
  EXPECT_NE(jit.what().find("not an OpenCL code"), std::string_view::npos) << jit.message();
  EXPECT_NE(jit.what().find("CUDA_ERROR_JIT_COMPILATION_DISABLED"), std::string_view::npos) << jit.message();
  EXPECT_NE(jit.fix().find("unset CUDA_DISABLE_PTX_JIT"), std::string_view::npos) << jit.message();
  const roster::error other = roster::opencl::detail::cl_failure("opencl:1: open", "clCreateContext", 7);
  EXPECT_EQ(other.fix().find("roster bug"), std::string_view::npos) << other.message();
  EXPECT_NE(other.fix().find("cuda.h"), std::string_view::npos) << other.message();
  // An OpenCL code roster does not expect stays a fault to report.
  const roster::error odd = roster::opencl::detail::cl_failure("opencl:1: open", "clCreateContext", -9999);
  EXPECT_NE(odd.fix().find("roster bug"), std::string_view::npos) << odd.message();
}

TEST(opencl_backend, a_malformed_knob_is_an_error_naming_it) {
  ASSERT_EQ(setenv("ROSTER_OPENCL_VECTOR", "sometimes", 1), 0);
  auto d = roster::acquire("opencl:0");
  ASSERT_EQ(unsetenv("ROSTER_OPENCL_VECTOR"), 0);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(d.error().what().find("ROSTER_OPENCL_VECTOR='sometimes'"), std::string_view::npos) << d.error().message();
  EXPECT_NE(d.error().message().find("\nFix: "), std::string::npos);
  EXPECT_TRUE(roster::acquire("opencl:0"));
}

}  // namespace

namespace {

// One physical device seen through OpenCL and another API is one circuit:
// the same UUID, the same PCI address, or the host CPU (PoCL beside lavapipe
// and the CPU backend in CI; an H200 beside cuda:0 and vulkan:0 on a GPU node).
TEST(opencl_backend, joins_the_circuit_of_the_device_it_shares) {
  auto all = roster::circuits();
  ASSERT_TRUE(all) << all.error().message();
  auto circuit_of = [&](const std::string& spec) -> int {
    for (std::size_t i = 0; i < all->size(); ++i) {
      const roster::circuit& c = (*all)[i];
      if (c.adapter.spec() == spec) return static_cast<int>(i);
      for (const auto& a : c.alternates)
        if (a.spec() == spec) return static_cast<int>(i);
    }
    return -1;
  };
  std::vector<roster::adapter_info> others;
  for (const auto& b : roster::registered_backends())
    if (b.id() != "opencl")
      if (auto listed = roster::enumerate_adapters(*b.registration))
        others.insert(others.end(), listed->begin(), listed->end());
  auto mine = roster::opencl::backend::enumerate();
  ASSERT_TRUE(mine);
  int pairs = 0;
  for (const auto& a : *mine)
    for (const auto& o : others) {
      const bool same = (a.has_uuid() && a.uuid == o.uuid) || (!a.pci_address.empty() && a.pci_address == o.pci_address) ||
                        (a.type == roster::device_type::cpu && o.type == roster::device_type::cpu);
      if (!same) continue;
      ++pairs;
      EXPECT_NE(circuit_of(a.spec()), -1) << a.spec() << " is in no circuit";
      EXPECT_EQ(circuit_of(a.spec()), circuit_of(o.spec())) << a.spec() << " and " << o.spec() << " are one device";
    }
  if (pairs == 0) GTEST_SKIP() << "no other API sees a device that OpenCL sees here";
}

}  // namespace
