// Under AddressSanitizer, every gtest binary runs LeakSanitizer's check when
// its tests end, inside RUN_ALL_TESTS, instead of at exit: then later static
// destructors and atexit handlers run unchecked (a leak check runs once), and
// the check does not race a driver's threads as they are torn down. LSan's
// tracer crashed ("Tracer caught signal 11 ... LeakSanitizer has encountered
// a fatal error") in opencl_backend after its tests had passed: at exit on
// 2026-12-04, and inside this check on 2026-12-05, so exiting threads were
// not its cause. The cause is the runtime's reading of a dynamic TLS block
// (scripts/test sets intercept_tls_get_addr=0, which says why).
// A leak found here fails the binary exactly as the exit check would.
// Added to gtest_dep by meson.build in an ASan build only.
#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#  define ROSTER_TEST_LSAN_EARLY 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define ROSTER_TEST_LSAN_EARLY 1
#  endif
#endif

#if defined(ROSTER_TEST_LSAN_EARLY)
#  include <sanitizer/lsan_interface.h>

namespace {

struct leak_check_when_the_tests_end : ::testing::Environment {
  void TearDown() override { __lsan_do_leak_check(); }
};

[[maybe_unused]] ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new leak_check_when_the_tests_end);

}  // namespace
#endif
