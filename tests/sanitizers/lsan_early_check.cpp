// An ASan build runs LeakSanitizer's check when the tests end
// (tests/support/lsan_before_exit.cpp, added to every gtest binary), and not
// again at exit: a block lost by an atexit handler, after the tests, is not
// reported. Without the early check the exit check reports it and the binary
// fails (abort_on_error=1, which scripts/test sets).
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

void lose_a_block_at_exit() {
  void* volatile p = std::malloc(4096);  // the pointer dies with this frame: unreachable
  (void)p;
}

TEST(lsan_early_check, the_leak_check_runs_when_the_tests_end) {
  ASSERT_EQ(std::atexit(lose_a_block_at_exit), 0);
}

}  // namespace
