// Native handles on the OpenCL backend: a user's own OpenCL kernel, built on
// roster's context and enqueued on roster's queue between two programs on
// roster's buffers, with no host wait in between (the queue is in order);
// and the handles' checks. The test links the ICD loader itself, as a user's
// OpenCL code does.
#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>
#include <roster/backends/opencl/native.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using roster::opencl::native;

constexpr const char* scale_add_cl = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void scale_add(global double* y, global const double* x, double a, ulong n) {
  const size_t i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
)CL";

TEST(opencl_native, handles_are_the_devices_own) {
  auto d = roster::acquire("opencl:0");
  ASSERT_TRUE(d) << d.error().message();
  auto h = roster::native<native>(**d);
  ASSERT_TRUE(h) << h.error().message();
  ASSERT_NE(h->context, nullptr);
  ASSERT_NE(h->queue, nullptr);
  cl_device_id in_context = nullptr;
  ASSERT_EQ(clGetContextInfo(h->context, CL_CONTEXT_DEVICES, sizeof in_context, &in_context, nullptr), CL_SUCCESS);
  EXPECT_EQ(in_context, h->device);
  cl_command_queue_properties props = 0;
  ASSERT_EQ(clGetCommandQueueInfo(h->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr), CL_SUCCESS);
  EXPECT_EQ(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0u) << "roster's queue must run in order";
  cl_platform_id platform = nullptr;
  ASSERT_EQ(clGetDeviceInfo(h->device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr), CL_SUCCESS);
  EXPECT_EQ(platform, h->platform);
  char name[256] = {};
  ASSERT_EQ(clGetDeviceInfo(h->device, CL_DEVICE_NAME, sizeof name, name, nullptr), CL_SUCCESS);
  EXPECT_EQ(std::string(name).find((*d)->adapter().name), 0u) << name;

  auto b = (*d)->allocate<float>(1000);
  ASSERT_TRUE(b);
  auto hb = roster::native_buffer<native>(**d, *b);
  ASSERT_TRUE(hb) << hb.error().message();
  EXPECT_EQ(hb->elements, 1000u);
  EXPECT_EQ(hb->type, roster::element_type::f32);
  std::size_t bytes = 0;
  ASSERT_EQ(clGetMemObjectInfo(hb->mem, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr), CL_SUCCESS);
  EXPECT_EQ(bytes, 4000u);
  ASSERT_TRUE((*d)->release(*b));
  auto gone = roster::native_buffer<native>(**d, *b);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), roster::errc::invalid_argument);
}

TEST(opencl_native, another_backends_handles_are_refused_by_name) {
  auto d = roster::acquire("opencl:0");
  ASSERT_TRUE(d) << d.error().message();
  auto wrong = roster::native<roster::cpu::native>(**d);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), roster::errc::invalid_argument);
  EXPECT_NE(wrong.error().what().find("asked for cpu handles, but this is a opencl device"), std::string_view::npos)
      << wrong.error().message();
  auto c = roster::acquire("cpu");
  ASSERT_TRUE(c);
  EXPECT_FALSE(roster::native<native>(**c));
}

// roster's programs before and after a kernel of the user's, all on the one
// queue, and no host wait until the end.
TEST(opencl_native, a_users_kernel_between_two_programs) {
  auto d = roster::acquire("opencl:0");
  ASSERT_TRUE(d) << d.error().message();
  if (!(*d)->caps().f64) GTEST_SKIP() << "the adapter has no double support";
  auto h = roster::native<native>(**d);
  ASSERT_TRUE(h) << h.error().message();
  cl_int status = CL_SUCCESS;
  const char* text = scale_add_cl;
  cl_program program = clCreateProgramWithSource(h->context, 1, &text, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(program, 1, &h->device, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "scale_add", &status);
  ASSERT_EQ(status, CL_SUCCESS);

  const std::size_t n = 100003;
  auto x = *(*d)->allocate<double>(n), y = *(*d)->allocate<double>(n), z = *(*d)->allocate<double>(n);
  std::vector<double> hx(n);
  for (std::size_t i = 0; i < n; ++i) hx[i] = static_cast<double>(i % 97);
  ASSERT_TRUE((*d)->upload(x, std::span<const double>(hx)));
  auto mx = roster::native_buffer<native>(**d, x), my = roster::native_buffer<native>(**d, y);
  ASSERT_TRUE(mx && my);

  roster::program first;
  first.fill(z, -1.0).mul(y, x, 2.0);  // y = 2x
  ASSERT_TRUE((*d)->dispatch(first));
  const double a = 3.0;
  const cl_ulong count = n;
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof(cl_mem), &my->mem), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof(cl_mem), &mx->mem), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 2, sizeof a, &a), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 3, sizeof count, &count), CL_SUCCESS);
  const std::size_t local = 64, global = (n + local - 1) / local * local;
  ASSERT_EQ(clEnqueueNDRangeKernel(h->queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), CL_SUCCESS);
  roster::program second;
  second.add(z, y, x);  // z = 5x + x
  ASSERT_TRUE((*d)->dispatch(second));
  ASSERT_TRUE((*d)->synchronize());

  std::vector<double> hy(n), hz(n);
  ASSERT_TRUE((*d)->download(y, std::span<double>(hy)));
  ASSERT_TRUE((*d)->download(z, std::span<double>(hz)));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(hy[i], 5.0 * hx[i]) << i;
    ASSERT_EQ(hz[i], 6.0 * hx[i]) << i;
  }
  clReleaseKernel(kernel);
  clReleaseProgram(program);
}

}  // namespace
