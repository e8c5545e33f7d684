// Kernels in the compile-time registry: resolution at compile time, static
// calls on the CPU backend with exact results, their runtime errors, and the
// bridge to the link-time kernel inventory.
#include <roster/backends/cpu.hpp>
#include <roster/static_kernels.hpp>

#include <gtest/gtest.h>

#include "../support/cpu_device.hpp"

#include "../support/cpu_test_kernels.hpp"

#include <cstdint>
#include <vector>

namespace {

using roster_test::axpy;  // y[i] += alpha * x[i]
// A second variant: y = alpha * x + y + 1, so a test sees which one ran.
template <class T>
void axpy_plus_one(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  const T alpha = a.scalar<T>(0);
  for (std::size_t i = begin; i < end; ++i) y[i] += alpha * x[i] + T(1);
}
// out[i] = base + i * step (an integer scalar and a float scalar).
void iota(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  float* out = a.data<float>(0);
  const auto base = a.scalar<std::int32_t>(0);
  const auto step = a.scalar<float>(1);
  for (std::size_t i = begin; i < end; ++i) out[i] = static_cast<float>(base) + step * static_cast<float>(i);
}

template <class T>
using axpy_k = roster::static_kernel<"saxpy", "cpu", "plain", roster::default_variant, &axpy<T>,
                                     roster::read_write<T>, roster::read<T>, roster::scalar<T>>;
using axpy_plus_one_k = roster::static_kernel<"saxpy", "cpu", "plus_one", roster::other_variant,
                                              &axpy_plus_one<double>, roster::read_write<double>,
                                              roster::read<double>, roster::scalar<double>>;
using iota_k = roster::static_kernel<"iota", "cpu", "plain", roster::default_variant, &iota,
                                     roster::write<float, roster::length::any>, roster::scalar<std::int32_t>,
                                     roster::scalar<float>>;

using backends = roster::static_registry<roster::cpu::backend>;
using kernels = roster::static_kernels<backends, axpy_k<double>, axpy_k<float>, axpy_plus_one_k, iota_k>;

static_assert(kernels::size == 4);
static_assert(kernels::contains("saxpy") && kernels::contains("iota") && !kernels::contains("axpy"));
static_assert(kernels::index_of("saxpy", "cpu", roster::element_type::f64) == 0);  // the default
static_assert(kernels::index_of("saxpy", "cpu", roster::element_type::f32) == 1);  // the only one
static_assert(kernels::index_of("saxpy", "cpu", roster::element_type::f64, "plus_one") == 2);
static_assert(kernels::index_of("saxpy", "cuda", roster::element_type::f64) == kernels::npos);
static_assert(kernels::index_of("saxpy", "cpu", roster::element_type::f64, "tiled") == kernels::npos);
static_assert(axpy_k<double>::arity == 3 && axpy_k<double>::type == roster::element_type::f64);
static_assert(axpy_k<float>::signature[2].scalar == roster::scalar_type::f32);

std::unique_ptr<roster::cpu::device> open_cpu() {
  auto d = backends::open<"cpu">();
  EXPECT_TRUE(d) << (d ? "" : d.error().message());
  return d ? std::move(*d) : nullptr;
}

template <class T>
roster::typed_buffer<T> upload(roster::cpu::device& d, const std::vector<T>& v) {
  auto b = roster::allocate_typed<T>(d, v.size());
  EXPECT_TRUE(b);
  EXPECT_TRUE(d.upload(*b, std::span<const T>(v)));
  return *b;
}

template <class T>
std::vector<T> download(roster::cpu::device& d, const roster::typed_buffer<T>& b) {
  std::vector<T> out(b.handle.size);
  EXPECT_TRUE(d.download(b, std::span<T>(out)));
  return out;
}

TEST(StaticKernels, DefaultVariantOnDoubles) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  std::vector<double> yv(1000), xv(1000);
  for (std::size_t i = 0; i < xv.size(); ++i) yv[i] = double(i), xv[i] = 0.5 * double(i);
  auto y = upload(*d, yv), x = upload(*d, xv);
  ASSERT_TRUE(kernels::call<"saxpy">(*d, y, x, 4.0));
  const auto out = download(*d, y);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 3.0 * double(i)) << i;  // i + 4 * i/2
}

TEST(StaticKernels, TypedFromAPlainBuffer) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto y = d->allocate<double>(4), x = d->allocate<double>(4);
  ASSERT_TRUE(y && x);
  ASSERT_TRUE(d->upload(*y, std::span<const double>(std::vector<double>{1, 2, 3, 4})));
  ASSERT_TRUE(d->upload(*x, std::span<const double>(std::vector<double>{4, 3, 2, 1})));
  auto ty = roster::typed_buffer<double>::of(*y), tx = roster::typed_buffer<double>::of(*x);
  ASSERT_TRUE(ty && tx);
  EXPECT_EQ(ty->handle, *y);
  ASSERT_TRUE(kernels::call<"saxpy">(*d, *ty, *tx, -1.0));
  EXPECT_EQ(download(*d, *ty), (std::vector<double>{-3, -1, 1, 3}));
}

TEST(StaticKernels, NamedVariantRuns) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto y = upload(*d, std::vector<double>(64, 1.0)), x = upload(*d, std::vector<double>(64, 2.0));
  ASSERT_TRUE((kernels::call<"saxpy", "plus_one">(*d, y, x, 3.0)));
  for (double v : download(*d, y)) ASSERT_EQ(v, 8.0);  // 1 + 3 * 2 + 1
  ASSERT_TRUE((kernels::call<"saxpy", "plain">(*d, y, x, 1.0)));
  for (double v : download(*d, y)) ASSERT_EQ(v, 10.0);
}

TEST(StaticKernels, FloatKernelAndDoubleLiteral) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto y = upload(*d, std::vector<float>(33, 1.0f)), x = upload(*d, std::vector<float>(33, 0.25f));
  ASSERT_TRUE(kernels::call<"saxpy">(*d, y, x, 2.0));  // a double converts to the float parameter
  for (float v : download(*d, y)) ASSERT_EQ(v, 1.5f);
}

TEST(StaticKernels, IntegerScalarAndExplicitExtent) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto out = upload(*d, std::vector<float>(10, -1.0f));
  ASSERT_TRUE(kernels::call_over<"iota">(*d, 6, out, 7, 0.5f));
  const std::vector<float> want{7.0f, 7.5f, 8.0f, 8.5f, 9.0f, 9.5f, -1.0f, -1.0f, -1.0f, -1.0f};
  EXPECT_EQ(download(*d, out), want);
  // Only length::any buffers: the call must give the index space.
  auto none = kernels::call<"iota">(*d, out, 7, 0.5f);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("call_over"), std::string::npos) << none.error().message();
  EXPECT_NE(none.error().message().find("Fix:"), std::string::npos);
}

TEST(StaticKernels, ManyThreadsCoverTheExtent) {
  auto d = roster_test::open_cpu_device(4);
  ASSERT_TRUE(d);
  auto& dev = **d;
  auto y = upload(dev, std::vector<double>(10007, 1.0)), x = upload(dev, std::vector<double>(10007, 1.0));
  ASSERT_TRUE(kernels::call<"saxpy">(dev, y, x, 1.0));
  for (double v : download(dev, y)) ASSERT_EQ(v, 2.0);
}

TEST(StaticKernels, GridSyncSplitCallsTheInnerDevice) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto split = roster::split_static(std::move(d));
  auto y = upload(split->inner(), std::vector<double>(8, 1.0)), x = upload(split->inner(), std::vector<double>(8, 1.0));
  ASSERT_TRUE(kernels::call<"saxpy">(*split, y, x, 5.0));
  for (double v : download(split->inner(), y)) ASSERT_EQ(v, 6.0);
}

TEST(StaticKernels, RuntimeErrorsEndWithAFix) {
  auto d = open_cpu();
  auto other = open_cpu();
  ASSERT_TRUE(d && other);
  auto y = upload(*d, std::vector<double>(16, 1.0)), x = upload(*d, std::vector<double>(15, 1.0));
  auto z = upload(*other, std::vector<double>(16, 1.0));
  const roster::buffer saved_y = y;
  const auto check = [](const roster::expected<void>& r, std::string_view what) {
    ASSERT_FALSE(r) << what;
    const std::string m = r.error().message();
    EXPECT_NE(m.find(what), std::string::npos) << m;
    EXPECT_NE(m.find("Fix:"), std::string::npos) << m;
  };
  check(kernels::call<"saxpy">(*d, y, x, 1.0), "15 elements, an earlier one 16");
  check(kernels::call<"saxpy">(*d, y, z, 1.0), "not live on this device");
  check(kernels::call<"saxpy">(*d, y, y, std::numeric_limits<double>::infinity()), "not finite");
  check(kernels::call_over<"saxpy">(*d, 17, y, y, 1.0), "beyond the buffers' length 16");
  check(kernels::call_over<"iota">(*d, 1, upload(*d, std::vector<float>(1)), -1, 1e39), "does not fit");
  ASSERT_TRUE(d->release(y));
  check(kernels::call<"saxpy">(*d, roster::typed_buffer<double>{saved_y}, roster::typed_buffer<double>{saved_y}, 1.0),
        "not live on this device");
  auto mistyped = roster::typed_buffer<float>::of(z);
  ASSERT_FALSE(mistyped);
  EXPECT_NE(mistyped.error().message().find("Fix:"), std::string::npos);
}

// Both views: the static kernel registered in the link-time kernel inventory
// runs through program::call with the same result.
ROSTER_REGISTER_STATIC_KERNEL(axpy_k<double>);

TEST(StaticKernels, RegisteredKernelRunsThroughAProgram) {
  auto entry = roster::find_kernel("saxpy", "cpu", roster::element_type::f64);
  ASSERT_TRUE(entry) << entry.error().message();
  EXPECT_EQ((*entry)->payload_as<roster::host_kernel>()->fn, &axpy<double>);
  EXPECT_EQ((*entry)->variant, "plain");
  EXPECT_TRUE((*entry)->is_default);
  EXPECT_EQ((*entry)->signature.size(), 3u);
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto y = upload(*d, std::vector<double>(20, 1.0)), x = upload(*d, std::vector<double>(20, 3.0));
  roster::program p;
  p.call("saxpy", {y, x}, {2.0});
  ASSERT_TRUE(d->dispatch(p));
  ASSERT_TRUE(kernels::call<"saxpy">(*d, y, x, 1.0));
  for (double v : download(*d, y)) ASSERT_EQ(v, 10.0);  // 1 + 6, then + 3
}

}  // namespace
