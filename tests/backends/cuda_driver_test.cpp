// The CUDA backend says what the machine lacks, each case with its own Fix:
// no NVIDIA GPU (the backend is absent: one short line), a GPU without the
// driver's library, a library that does not answer, a driver older than the
// runtime, no device visible. The cases are checked on made-up probes (every
// machine can run them) and on this machine: a fake sysfs with an NVIDIA GPU
// and no libcuda.so.1; a stand-in libcuda.so.1 that reports CUDA 12.2
// (OldDriver.*, run with LD_LIBRARY_PATH at tests/backends/stub_libcuda).
// The backend's settings (ROSTER_CUDA_GRID_SYNC, ROSTER_CUDA_VARIANT) are
// read with roster::env before the driver is asked, so a malformed one is an
// error here too.

#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>

#include <roster/backends/cuda/detail/driver.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include "../support/scoped_env.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace {

namespace fs = std::filesystem;
using roster::cuda::detail::driver_probe;
using roster::cuda::detail::explain;

constexpr int not_initialized = 3, no_device = 100, launch_failure = 719;

// One short line that names the backend once, with a Fix.
void expect_clean(const roster::error& e) {
  const std::string what(e.what());
  EXPECT_EQ(what.rfind("cuda: ", 0), 0u) << what;
  EXPECT_EQ(what.find("cuda: ", 1), std::string::npos) << "the context repeats: " << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_FALSE(e.fix().empty()) << what;
}

driver_probe probe(int error, int driver, bool library, bool module, bool gpu, std::string mask = {}) {
  driver_probe p;
  p.error = error;
  p.driver_version = driver;
  p.kernels_version = 13000;
  p.library = library;
  p.kernel_module = module;
  p.nvidia_gpu = gpu;
  p.visible_devices = std::move(mask);
  return p;
}

TEST(CudaDriver, NoNvidiaGpuIsAbsentInOneQuietLine) {
  const auto p = probe(not_initialized, 0, false, false, false);
  EXPECT_TRUE(roster::cuda::detail::absent(p));
  const auto e = explain(p);
  expect_clean(e);
  EXPECT_EQ(e.code(), roster::errc::unavailable);
  EXPECT_EQ(e.what(), "cuda: no NVIDIA GPU on this machine");
  EXPECT_NE(e.fix().find("nothing to do"), std::string_view::npos) << e.message();
  // Not the runtime's misleading "driver version is insufficient".
  EXPECT_EQ(e.message().find("insufficient"), std::string::npos) << e.message();
}

TEST(CudaDriver, AGpuWithoutTheDriverLibraryIsNoDriver) {
  for (bool module : {false, true}) {
    const auto p = probe(not_initialized, 0, false, module, !module);
    EXPECT_FALSE(roster::cuda::detail::absent(p));
    const auto e = explain(p);
    expect_clean(e);
    EXPECT_EQ(e.code(), roster::errc::unavailable);
    EXPECT_NE(e.what().find("cuda: no NVIDIA driver on this machine"), std::string_view::npos) << e.message();
    EXPECT_NE(e.what().find("libcuda.so.1 is not installed"), std::string_view::npos) << e.message();
    EXPECT_NE(e.what().find(module ? "kernel driver is loaded" : "GPU is on the PCI bus"), std::string_view::npos)
        << e.message();
    EXPECT_NE(e.fix().find("install the NVIDIA driver for CUDA 13.0 or newer"), std::string_view::npos)
        << e.message();
    EXPECT_NE(e.fix().find("--gpus all"), std::string_view::npos) << e.message();
  }
}

TEST(CudaDriver, ALibraryThatDoesNotAnswer) {
  const auto e = explain(probe(not_initialized, 0, true, true, true));
  expect_clean(e);
  EXPECT_NE(e.what().find("libcuda.so.1 loads but does not answer"), std::string_view::npos) << e.message();
  EXPECT_NE(e.fix().find("reinstall the NVIDIA driver"), std::string_view::npos) << e.message();
}

TEST(CudaDriver, ADriverOlderThanTheKernelsGivesBothVersions) {
  const auto e = explain(probe(0, 12020, true, true, true));
  expect_clean(e);
  EXPECT_EQ(e.code(), roster::errc::unavailable);
  EXPECT_NE(e.what().find("cuda: the NVIDIA driver supports CUDA 12.2, older than the CUDA 13.0 toolkit that built "
                          "roster's kernels"),
            std::string_view::npos)
      << e.message();
  // The driver refuses no call by itself: roster compares the versions (no code of the driver's to show).
  EXPECT_EQ(e.what().find("CUDA_ERROR"), std::string_view::npos) << e.message();
  EXPECT_NE(e.fix().find("update the NVIDIA driver to one for CUDA 13.0 or newer"), std::string_view::npos)
      << e.message();
  EXPECT_NE(e.fix().find("no newer than 12.2 (scripts/regen-cuda-fatbin)"), std::string_view::npos) << e.message();
  // A newer minor release of the same major one loads the image.
  const auto same_major = explain(probe(launch_failure, 13000 - 10 + 20, true, true, true));
  EXPECT_EQ(same_major.what().find("older than"), std::string_view::npos) << same_major.message();
}

TEST(CudaDriver, NoDeviceVisibleNamesTheMask) {
  const auto masked = explain(probe(no_device, 13000, true, true, true, "-1"));
  expect_clean(masked);
  EXPECT_NE(masked.what().find("no CUDA device is visible (CUDA_VISIBLE_DEVICES='-1')"), std::string_view::npos)
      << masked.message();
  const auto none = explain(probe(no_device, 13000, true, true, false));
  expect_clean(none);
  EXPECT_NE(none.what().find("the NVIDIA driver sees no CUDA device"), std::string_view::npos) << none.message();
  EXPECT_NE(none.fix(), masked.fix());
}

TEST(CudaDriver, AnyOtherFailureKeepsTheDriversCode) {
  const auto e = explain(probe(launch_failure, 13000, true, true, true));
  expect_clean(e);
  // The name from libcuda.so.1 where it loads, else roster's own table.
  EXPECT_NE(e.what().find("(CUDA_ERROR_LAUNCH_FAILED, 719)"), std::string_view::npos) << e.message();
}

using roster_test::scoped_env;

bool driver_library_loads() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib != nullptr) ::dlclose(lib);
  return lib != nullptr;
}

// This machine with a fake sysfs that shows an NVIDIA GPU: where libcuda.so.1
// is missing (CI), acquire says there is no driver rather than no GPU.
TEST(CudaDriver, ThisMachineWithAGpuOnTheBusAndNoDriverLibrary) {
  if (driver_library_loads()) GTEST_SKIP() << "libcuda.so.1 is installed here: the no-driver case needs a machine without it (CI)";
  const fs::path root = fs::temp_directory_path() / ("roster-cuda-sysfs-" + std::to_string(::getpid()));
  fs::create_directories(root / "bus/pci/devices/0000:01:00.0");
  std::ofstream(root / "bus/pci/devices/0000:01:00.0/vendor") << "0x10de\n";
  std::ofstream(root / "bus/pci/devices/0000:01:00.0/class") << "0x030200\n";
  {
    scoped_env sysfs("ROSTER_SYSFS_ROOT", root.c_str());
    auto d = roster::acquire("cuda:0");
    ASSERT_FALSE(d);
    expect_clean(d.error());
    EXPECT_EQ(d.error().code(), roster::errc::unavailable);
    EXPECT_NE(d.error().what().find("no NVIDIA driver on this machine: an NVIDIA GPU is on the PCI bus"),
              std::string_view::npos)
        << d.error().message();
    auto listed = roster::cuda::backend::enumerate();
    ASSERT_TRUE(listed) << listed.error().message();
    EXPECT_TRUE(listed->empty());
  }
  fs::remove_all(root);
}

TEST(CudaSettings, AMalformedVariantIsAnErrorNotZero) {
  for (const char* bad : {"abc", "13", "-1", "4x"}) {
    scoped_env v("ROSTER_CUDA_VARIANT", bad);
    auto d = roster::acquire("cuda:0");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::invalid_argument) << d.error().message();
    EXPECT_NE(d.error().what().find(std::string("cuda: ROSTER_CUDA_VARIANT='") + bad + "' is not a whole number from 0 to 12"),
              std::string_view::npos)
        << d.error().message();
    EXPECT_NE(d.error().message().find("\nFix: "), std::string::npos);
  }
  scoped_env good("ROSTER_CUDA_VARIANT", "12");
  auto d = roster::acquire("cuda:0");
  if (!d) {
    EXPECT_NE(d.error().code(), roster::errc::invalid_argument) << d.error().message();
  }
}

TEST(CudaSettings, GridSyncIsAChoice) {
  {
    scoped_env v("ROSTER_CUDA_GRID_SYNC", "fast");
    auto d = roster::acquire("cuda:0");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::invalid_argument) << d.error().message();
    EXPECT_NE(d.error().what().find("ROSTER_CUDA_GRID_SYNC='fast' is not one of native, split or auto"),
              std::string_view::npos)
        << d.error().message();
  }
  for (const char* good : {"native", "Split", " auto "}) {
    scoped_env v("ROSTER_CUDA_GRID_SYNC", good);
    auto d = roster::acquire("cuda:0");
    if (!d) {
      EXPECT_NE(d.error().code(), roster::errc::invalid_argument) << good << ": " << d.error().message();
    }
  }
}

// Run with LD_LIBRARY_PATH at the stand-in libcuda.so.1, which reports CUDA
// 12.2: older than the CUDA 13 toolkit that built the kernels' image.
TEST(OldDriver, TheErrorGivesBothVersionsAndTheUpdate) {
  auto d = roster::acquire("cuda:0");
  ASSERT_FALSE(d);
  expect_clean(d.error());
  EXPECT_EQ(d.error().code(), roster::errc::unavailable);
  EXPECT_NE(d.error().what().find("cuda: the NVIDIA driver supports CUDA 12.2, older than the CUDA "),
            std::string_view::npos)
      << d.error().message();
  EXPECT_NE(d.error().what().find("toolkit that built roster's kernels"), std::string_view::npos)
      << d.error().message();
  EXPECT_NE(d.error().fix().find("update the NVIDIA driver"), std::string_view::npos) << d.error().message();
  auto listed = roster::cuda::backend::enumerate();
  ASSERT_TRUE(listed) << listed.error().message();
  EXPECT_TRUE(listed->empty());
}

}  // namespace
