// Native handles on the CUDA backend: a user's own kernel (cuda_native_kernel.cu,
// compiled by nvcc) runs on roster's stream between two roster programs, with
// no host synchronisation in between, and synchronize() covers it; the
// handles name roster's stream, its context and the buffers' device memory;
// another backend's handles are an error naming both. Without a visible
// device every test skips and says why.
#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>
#include <roster/backends/cuda.hpp>
#include <roster/native.hpp>

// The CUDA API's own types, to show the handles are them (no link needed).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include "../support/cuda_gpu.hpp"

#include <string>
#include <type_traits>
#include <vector>

extern "C" int roster_test_scale_add(double* y, const double* x, double s, unsigned long long n, void* stream);
extern "C" void* roster_test_stream_context(void* stream);
extern "C" int roster_test_pointer_device(const void* p);
extern "C" void* roster_test_runtime_context(int ordinal);

namespace {

static_assert(std::is_same_v<decltype(roster::cuda::native::stream), cudaStream_t>);
static_assert(std::is_same_v<decltype(roster::cuda::native::stream), CUstream>);
static_assert(std::is_same_v<decltype(roster::cuda::native::context), CUcontext>);


void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

std::unique_ptr<roster::device> open_cuda() {
  auto d = roster::acquire("cuda:0");
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

TEST(cuda_native, handles_name_roster_s_stream_context_and_memory) {
  ROSTER_TEST_NEED_GPU();
  auto d = open_cuda();
  ASSERT_TRUE(d);
  auto h = roster::native<roster::cuda::native>(*d);
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(h->ordinal, 0);
  ASSERT_NE(h->stream, nullptr);
  ASSERT_NE(h->context, nullptr);
  // The context is the one roster's stream belongs to.
  EXPECT_EQ(roster_test_stream_context(h->stream), static_cast<void*>(h->context));
  unsigned flags = 0;
  EXPECT_EQ(cudaStreamGetFlags(h->stream, &flags), cudaSuccess);
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));

  auto b = d->allocate<float>(1000);
  ASSERT_TRUE(b);
  auto hb = roster::native_buffer<roster::cuda::native>(*d, *b);
  ASSERT_TRUE(hb) << hb.error().message();
  ASSERT_NE(hb->pointer, nullptr);
  EXPECT_EQ(roster_test_pointer_device(hb->pointer), h->ordinal);
  EXPECT_EQ(hb->type, roster::element_type::f32);
  EXPECT_EQ(hb->size, 1000u);
}

// roster opens the device's primary context through the driver API: the
// context the runtime uses after cudaSetDevice, so runtime-API code and
// roster share memory, streams and modules.
TEST(cuda_native, the_context_is_the_one_cudaSetDevice_uses) {
  ROSTER_TEST_NEED_GPU();
  auto d = open_cuda();
  ASSERT_TRUE(d);
  auto h = roster::native<roster::cuda::native>(*d);
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_EQ(roster_test_runtime_context(h->ordinal), static_cast<void*>(h->context));
}

// roster writes y = 2x, the user's kernel makes y = 3y + x + i % 7 on roster's
// stream, roster adds z = y + x: three launches in stream order, no host sync
// until synchronize(); then every value is checked exactly. Large enough that
// a kernel on another stream would race.
TEST(cuda_native, a_user_kernel_on_roster_s_stream_runs_between_two_programs) {
  ROSTER_TEST_NEED_GPU();
  auto d = open_cuda();
  ASSERT_TRUE(d);
  constexpr std::size_t n = (std::size_t{1} << 24) + 3;
  auto x = d->allocate<double>(n), y = d->allocate<double>(n), z = d->allocate<double>(n);
  ASSERT_TRUE(x && y && z);
  std::vector<double> xs(n);
  for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<double>(i);
  ASSERT_TRUE(d->upload<double>(*x, xs));
  auto h = roster::native<roster::cuda::native>(*d);
  auto hx = roster::native_buffer<roster::cuda::native>(*d, *x);
  auto hy = roster::native_buffer<roster::cuda::native>(*d, *y);
  ASSERT_TRUE(h && hx && hy);

  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    roster::program first;
    first.fill(*z, -1.0).mul(*y, *x, 2.0);
    ASSERT_TRUE(d->dispatch(first));
    ASSERT_EQ(roster_test_scale_add(static_cast<double*>(hy->pointer), static_cast<const double*>(hx->pointer), 3.0,
                                    n, h->stream),
              0);
    roster::program second;
    second.add(*z, *y, *x);
    ASSERT_TRUE(d->dispatch(second));
    ASSERT_TRUE(d->synchronize());

    std::vector<double> zs(n);
    ASSERT_TRUE(d->download<double>(*z, zs));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double want = 7.0 * static_cast<double>(i) + static_cast<double>(i % 7) + static_cast<double>(i);
      if (zs[i] != want && wrong++ < 5) ADD_FAILURE() << "z[" << i << "] = " << zs[i] << ", want " << want;
    }
    EXPECT_EQ(wrong, 0u);
  }
}

// The user's kernel launched last: synchronize() alone makes its result visible.
TEST(cuda_native, synchronize_waits_for_a_user_kernel) {
  ROSTER_TEST_NEED_GPU();
  auto d = open_cuda();
  ASSERT_TRUE(d);
  constexpr std::size_t n = std::size_t{1} << 24;
  auto x = d->allocate<double>(n), y = d->allocate<double>(n);
  ASSERT_TRUE(x && y);
  roster::program fill;
  fill.fill(*x, 1.0).fill(*y, 2.0);
  ASSERT_TRUE(d->dispatch(fill));
  auto h = roster::native<roster::cuda::native>(*d);
  auto hx = roster::native_buffer<roster::cuda::native>(*d, *x);
  auto hy = roster::native_buffer<roster::cuda::native>(*d, *y);
  ASSERT_TRUE(h && hx && hy);
  ASSERT_EQ(roster_test_scale_add(static_cast<double*>(hy->pointer), static_cast<const double*>(hx->pointer), 3.0, n,
                                  h->stream),
            0);
  ASSERT_TRUE(d->synchronize());
  EXPECT_EQ(cudaStreamQuery(h->stream), cudaSuccess);
  std::vector<double> ys(n);
  ASSERT_TRUE(d->download<double>(*y, ys));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (ys[i] != 7.0 + static_cast<double>(i % 7) && wrong++ < 5) ADD_FAILURE() << "y[" << i << "] = " << ys[i];
  EXPECT_EQ(wrong, 0u);
}

TEST(cuda_native, another_backend_s_handles_are_an_error_naming_both) {
  ROSTER_TEST_NEED_GPU();
  auto d = open_cuda();
  ASSERT_TRUE(d);
  auto c = roster::acquire("cpu");
  ASSERT_TRUE(c) << c.error().message();
  auto cb = (*c)->allocate<float>(8);
  auto gb = d->allocate<float>(8);
  ASSERT_TRUE(cb && gb);
  auto as_cpu = roster::native<roster::cpu::native>(*d);
  ASSERT_FALSE(as_cpu);
  EXPECT_EQ(as_cpu.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(as_cpu.error().what().find("asked for cpu handles, but this is a cuda device"), std::string::npos)
      << as_cpu.error().message();
  expect_fix(as_cpu.error());
  auto as_cuda = roster::native<roster::cuda::native>(**c);
  ASSERT_FALSE(as_cuda);
  EXPECT_NE(as_cuda.error().what().find("asked for cuda handles, but this is a cpu device"), std::string::npos)
      << as_cuda.error().message();
  expect_fix(as_cuda.error());
  auto foreign = roster::native_buffer<roster::cuda::native>(*d, *cb);
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().what().find("another device"), std::string::npos) << foreign.error().message();
  expect_fix(foreign.error());
  ASSERT_TRUE(d->release(*gb));
  auto released = roster::native_buffer<roster::cuda::native>(*d, *gb);
  ASSERT_FALSE(released);
  EXPECT_NE(released.error().what().find("not live"), std::string::npos) << released.error().message();
  expect_fix(released.error());
}

}  // namespace
