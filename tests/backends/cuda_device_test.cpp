// The CUDA backend on a real card: adapter identity, every op in float and
// double on both grid-sync paths, fusion, long programs, and CUDA errors.
// Without a visible device every test skips and says why.

#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>
#include <roster/native.hpp>

#include <gtest/gtest.h>

#include "../support/cuda_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

using roster::buffer;
using roster::program;
using roster::cuda::grid_sync_mode;


using roster_test::cuda_of;

// A host model of a device's buffers, running steps one after another.
template <class T>
struct model {
  std::map<std::uint32_t, std::vector<T>> data;
  void run(const program& p) {
    for (const auto& s : p.steps()) {
      if (s.op == roster::op::grid_sync) continue;
      auto& out = data[s.out.slot];
      const T sc = static_cast<T>(s.scalar);
      if (s.op == roster::op::dot) {
        const auto &a = data[s.in1.slot], &b = data[s.in2.slot];
        double sum = 0;
        for (std::size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
        out[0] = static_cast<T>(sum);
        continue;
      }
      for (std::size_t i = 0; i < out.size(); ++i) {
        const T a = s.in1.owner ? data[s.in1.slot][i] : T(0);
        const T b = s.in2.owner ? data[s.in2.slot][i] : T(0);
        switch (s.op) {
          case roster::op::fill: out[i] = sc; break;
          case roster::op::copy: out[i] = a; break;
          case roster::op::mul: out[i] = sc * a; break;
          case roster::op::add: out[i] = a + b; break;
          case roster::op::triad: out[i] = a + sc * b; break;
          case roster::op::nstream: out[i] += a + sc * b; break;
          default: break;
        }
      }
    }
  }
};

// Buffers on a device mirrored by a host model, filled with fresh random values.
template <class T>
struct fixture {
  explicit fixture(roster::device& d) : dev(d) {}
  roster::device& dev;
  model<T> host;
  std::mt19937_64 rng{std::random_device{}()};

  buffer make(std::size_t n) {
    auto b = dev.allocate<T>(n);
    EXPECT_TRUE(b) << b.error().message();
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(u(rng));
    auto ok = dev.upload<T>(*b, v);
    EXPECT_TRUE(ok) << ok.error().message();
    host.data[b->slot] = v;
    return *b;
  }
  // Runs p on the device and the model and compares every buffer.
  void check(const program& p, const std::string& what) {
    auto ok = dev.dispatch(p);
    ASSERT_TRUE(ok) << what << ": " << ok.error().message();
    host.run(p);
    const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    for (auto& [slot, want] : host.data) {
      std::vector<T> got(want.size());
      buffer b{dev.id(), slot, roster::element_of<T>(), want.size()};
      auto d = dev.download<T>(b, got);
      ASSERT_TRUE(d) << d.error().message();
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double scale = std::max(1.0, std::fabs(static_cast<double>(want[i])));
        if (!(std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <= tol * scale))
          if (bad++ == 0) first = i;
      }
      ASSERT_EQ(bad, 0u) << what << ": buffer " << slot << " has " << bad << " wrong of " << want.size()
                         << "; first at " << first << ": got " << got[first] << ", want " << want[first];
    }
  }
};

class CudaDevice : public ::testing::TestWithParam<grid_sync_mode> {
 protected:
  void SetUp() override {
    ROSTER_TEST_NEED_GPU();
    auto d = roster::acquire("cuda:0", {.force_split = GetParam() == grid_sync_mode::split});
    ASSERT_TRUE(d) << d.error().message();
    dev_ = std::move(*d);
    ASSERT_EQ(cuda_of(*dev_).mode(), GetParam());
    ASSERT_EQ(dev_->caps().native_grid_sync, GetParam() == grid_sync_mode::native);
  }
  std::unique_ptr<roster::device> dev_;
};

TEST(CudaAdapters, ReportIdentityFromTheRuntime) {
  ROSTER_TEST_NEED_GPU();
  auto list = roster::cuda::backend::enumerate();
  ASSERT_TRUE(list) << list.error().message();
  for (std::size_t i = 0; i < list->size(); ++i) {
    const auto& a = (*list)[i];
    SCOPED_TRACE(a.spec() + " " + a.name);
    EXPECT_EQ(a.backend, "cuda");
    EXPECT_EQ(a.ordinal, i);
    EXPECT_FALSE(a.name.empty());
    EXPECT_TRUE(a.has_uuid());
    EXPECT_TRUE(std::regex_match(a.uuid_string(), std::regex("GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")));
    EXPECT_TRUE(std::regex_match(a.pci_address, std::regex("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.0")))
        << a.pci_address;
    EXPECT_EQ(a.vendor_id, 0x10deu);
    EXPECT_GT(a.memory_bytes, std::uint64_t{1} << 30);
    EXPECT_GT(a.compute_units, 0u);
    EXPECT_NE(a.driver_version.find("CUDA "), std::string::npos) << a.driver_version;
    EXPECT_TRUE(a.type == roster::device_type::discrete_gpu || a.type == roster::device_type::integrated_gpu);
    std::printf("%s: %s, %s, pci %s, device 0x%04x, %llu MiB, %u SMs, driver %s, cooperative launch %s\n",
                a.spec().c_str(), a.name.c_str(), a.uuid_string().c_str(), a.pci_address.c_str(), a.device_id,
                static_cast<unsigned long long>(a.memory_bytes >> 20), a.compute_units, a.driver_version.c_str(),
                a.native_grid_sync ? "yes" : "no");
  }
}

// The kernels' module is loaded once, at the first dispatch or when asked
// (roster::kernels_loaded), and the driver says which code runs: the image's
// SASS for this GPU, or (CUDA_FORCE_PTX_JIT=1, or a GPU the image has no SASS
// for) its PTX compiled at the load.
TEST(CudaAdapters, KernelsLoadedSaysWhichCodeRuns) {
  ROSTER_TEST_NEED_GPU();
  auto d = roster::acquire("cuda:0");
  ASSERT_TRUE(d) << d.error().message();
  auto load = roster::kernels_loaded(**d);
  ASSERT_TRUE(load) << load.error().message();
  ASSERT_TRUE(load->has_value());
  const roster::code_load first = **load;
  EXPECT_GT(first.ns, 0);
  std::printf("cuda:0 kernels loaded in %.1f ms: %s\n", static_cast<double>(first.ns) / 1e6, first.how.c_str());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.how, m, std::regex("of the image \\(([a-z0-9_ ]+)\\)"))) << first.how;
  const std::string image = " " + m[1].str() + " ";  // its SASS and PTX, e.g. "sm_75 ... sm_120 compute_75"
  const char* force = std::getenv("CUDA_FORCE_PTX_JIT");
  if (force != nullptr && std::string(force) == "1") {
    EXPECT_NE(first.how.find("the driver compiled PTX compute_75"), std::string::npos) << first.how;
  } else if (std::regex_search(first.how, m, std::regex("compiled PTX compute_[0-9]+ to (sm_[0-9]+)"))) {
    EXPECT_EQ(image.find(" " + m[1].str() + " "), std::string::npos) << "JIT although the image has SASS for "
                                                                     << m[1].str() << ": " << first.how;
  } else {
    ASSERT_TRUE(std::regex_search(first.how, m, std::regex("SASS (sm_[0-9]+) from the image, no JIT"))) << first.how;
    EXPECT_NE(image.find(" " + m[1].str() + " "), std::string::npos) << image;
  }
  // Loaded once: a second ask and a dispatch reuse it.
  fixture<float> f(**d);
  buffer a = f.make(100), b = f.make(100);
  f.check(program().copy(b, a), "copy after the load");
  auto again = roster::kernels_loaded(**d);
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->ns, first.ns);
}

TEST(CudaAdapters, OrdinalPastTheLastIsNotFound) {
  ROSTER_TEST_NEED_GPU();
  auto d = roster::acquire("cuda:4096");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::not_found);
  EXPECT_NE(d.error().fix().find("CUDA_VISIBLE_DEVICES"), std::string_view::npos) << d.error().message();
}

template <class T>
void every_op_alone(roster::device& dev) {
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, (std::size_t{1} << 20) + 7}) {
    fixture<T> f(dev);
    buffer a = f.make(n), b = f.make(n), c = f.make(n), r = f.make(1);
    const std::string sz = " n=" + std::to_string(n);
    f.check(program().fill(a, 1.5), "fill" + sz);
    f.check(program().copy(c, a), "copy" + sz);
    f.check(program().mul(b, c, 0.375), "mul" + sz);
    f.check(program().add(c, a, b), "add" + sz);
    f.check(program().triad(a, b, c, -0.625), "triad" + sz);
    f.check(program().nstream(a, b, c, 0.25), "nstream" + sz);
    f.check(program().dot(r, a, b), "dot" + sz);
  }
}

TEST_P(CudaDevice, EveryOpAloneFloat) { every_op_alone<float>(*dev_); }
TEST_P(CudaDevice, EveryOpAloneDouble) { every_op_alone<double>(*dev_); }

template <class T>
void fused_programs(roster::device& dev) {
  for (std::size_t n : {std::size_t{5}, std::size_t{4096}, (std::size_t{1} << 21) + 3}) {
    fixture<T> f(dev);
    buffer a = f.make(n), b = f.make(n), c = f.make(n), r = f.make(1), s = f.make(3);
    program chain;  // one segment: each step reads what the one before wrote
    chain.copy(c, a).mul(b, c, 0.5).add(c, a, b).triad(a, b, c, 2.0).nstream(a, b, c, -1.0).dot(r, a, b);
    f.check(chain, "element-wise chain then dot, n=" + std::to_string(n));
    program synced;  // segments, a dot whose result a later step reads, a second length
    synced.triad(a, b, c, 0.25).grid_sync().dot(r, a, c).copy(s, s).dot(s, a, b).grid_sync().mul(b, a, 3.0)
        .dot(r, b, b).fill(c, -2.0);
    f.check(synced, "segmented program, n=" + std::to_string(n));
  }
}

TEST_P(CudaDevice, FusedProgramsFloat) { fused_programs<float>(*dev_); }
TEST_P(CudaDevice, FusedProgramsDouble) { fused_programs<double>(*dev_); }

TEST_P(CudaDevice, ProgramsLongerThanOneLaunch) {
  fixture<double> f(*dev_);
  buffer a = f.make(777), b = f.make(777), r = f.make(1);
  program p;
  for (int i = 0; i < 150; ++i) {
    p.triad(a, a, b, 0.001);
    if (i % 7 == 0) p.grid_sync();
    if (i % 31 == 0) p.dot(r, a, b);
  }
  f.check(p, "150 triads with syncs and dots");
}

TEST_P(CudaDevice, PathMatchesTheMode) {
  fixture<float> f(*dev_);
  buffer a = f.make(10000), b = f.make(10000), r = f.make(1);
  auto& cuda = cuda_of(*dev_);
  const auto before = cuda.launches();
  f.check(program().dot(r, a, b), "dot");
  f.check(program().triad(a, a, b, 2.0).grid_sync().dot(r, a, b), "triad, sync, dot");
  const auto after = cuda.launches();
  if (GetParam() == grid_sync_mode::native) {
    EXPECT_EQ(after.cooperative - before.cooperative, 2u) << "each program is one cooperative launch";
    EXPECT_EQ(after.plain, before.plain);
  } else {
    EXPECT_EQ(after.cooperative, before.cooperative);
    EXPECT_EQ(after.plain - before.plain, 5u) << "dot: 2 kernels; triad: 1; dot: 2";
  }
}

TEST_P(CudaDevice, TimedDispatchUsesEvents) {
  fixture<double> f(*dev_);
  buffer a = f.make(1 << 22), b = f.make(1 << 22), c = f.make(1 << 22);
  auto t = dev_->timed_dispatch(program().triad(a, b, c, 3.0));
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_GT(t->count(), 0);
  EXPECT_LT(t->count(), 1'000'000'000);
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaDevice, ::testing::Values(grid_sync_mode::native, grid_sync_mode::split),
                         [](const auto& info) { return std::string(roster::cuda::to_string(info.param)); });

TEST(CudaErrors, OversizedAllocationIsOutOfMemoryAndTheDeviceLivesOn) {
  ROSTER_TEST_NEED_GPU();
  auto d = roster::acquire("cuda:0");
  ASSERT_TRUE(d) << d.error().message();
  auto huge = (*d)->allocate<double>(std::size_t{1} << 39);  // 4 TiB
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), roster::errc::out_of_memory);
  EXPECT_NE(huge.error().message().find("(CUDA_ERROR_OUT_OF_MEMORY, 2)"), std::string::npos)
      << huge.error().message();
  EXPECT_FALSE(huge.error().fix().empty());
  fixture<float> f(**d);
  buffer a = f.make(100), b = f.make(100);
  f.check(program().copy(b, a), "copy after a failed allocation");
}

TEST(CudaErrors, GridSyncVariableChoosesTheSplit) {
  ROSTER_TEST_NEED_GPU();
  ::setenv("ROSTER_CUDA_GRID_SYNC", "split", 1);
  auto split = roster::acquire("cuda:0", {});
  ::setenv("ROSTER_CUDA_GRID_SYNC", "sometimes", 1);
  auto bad = roster::acquire("cuda:0");
  ::unsetenv("ROSTER_CUDA_GRID_SYNC");
  ASSERT_TRUE(split) << split.error().message();
  EXPECT_FALSE((*split)->caps().native_grid_sync);
  EXPECT_EQ(cuda_of(**split).mode(), grid_sync_mode::split);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(bad.error().message().find("sometimes"), std::string::npos);
  EXPECT_FALSE(bad.error().fix().empty());
}

// ROSTER_CUDA_VARIANT picks the fast path's kernel shape (process-wide, at
// open); every shape gives the same results, and unset is the default again.
TEST(CudaErrors, VariantVariablePicksAShapeThatRunsRight) {
  ROSTER_TEST_NEED_GPU();
  for (const char* v : {"0", "4", "11"}) {
    ::setenv("ROSTER_CUDA_VARIANT", v, 1);
    auto d = roster::acquire("cuda:0");
    ::unsetenv("ROSTER_CUDA_VARIANT");
    ASSERT_TRUE(d) << v << ": " << d.error().message();
    fixture<float> f(**d);
    buffer a = f.make(100003), b = f.make(100003), c = f.make(100003);
    f.check(program().triad(a, b, c, 2.5), std::string("triad with ROSTER_CUDA_VARIANT=") + v);
  }
  auto d = roster::acquire("cuda:0");
  ASSERT_TRUE(d) << d.error().message();
  fixture<double> f(**d);
  buffer a = f.make(4099), b = f.make(4099);
  f.check(program().copy(b, a), "copy with the default shape again");
}

TEST(CudaErrors, NativeNeedsCooperativeLaunch) {
  ROSTER_TEST_NEED_GPU();
  auto d = roster::open_as<roster::cuda::backend>();
  ASSERT_TRUE(d) << d.error().message();
  auto ok = (*d)->set_mode(grid_sync_mode::native);
  EXPECT_EQ(static_cast<bool>(ok), (*d)->adapter().native_grid_sync);
  EXPECT_TRUE((*d)->set_mode(grid_sync_mode::split));
  EXPECT_FALSE((*d)->caps().native_grid_sync);
}

}  // namespace
