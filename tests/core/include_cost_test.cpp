// What a file pays to include roster in library mode: <roster/roster.hpp>
// brings none of the standard headers that cost most to compile beyond the
// ones it needs (bench/compile_cost measures the time; this names the
// headers, so a change that brings one back fails here, with its name).
// roster.hpp comes first: nothing else may have brought them.
#include <roster/roster.hpp>

#if defined(__GLIBCXX__)
constexpr bool checked = true;
// libstdc++'s include guards.
constexpr struct {
  const char* name;
  bool included;
} heavy[] = {
#  if defined(_GLIBCXX_CHRONO)
    {"<chrono> (it brings <sstream> and the locale facets)", true},
#  endif
#  if defined(_GLIBCXX_ALGORITHM)
    {"<algorithm> (it brings the parallel and ranges algorithms)", true},
#  endif
#  if defined(_GLIBCXX_SSTREAM)
    {"<sstream>", true},
#  endif
#  if defined(_GLIBCXX_FUNCTIONAL)
    {"<functional>", true},
#  endif
#  if defined(_GLIBCXX_REGEX)
    {"<regex>", true},
#  endif
#  if defined(_GLIBCXX_MAP) || defined(_GLIBCXX_UNORDERED_MAP)
    {"<map> or <unordered_map>", true},
#  endif
#  if defined(_GLIBCXX_IOSTREAM)
    {"<iostream>", true},
#  endif
    {"", false},
};
#else
constexpr bool checked = false;
#endif

#include <gtest/gtest.h>

#include <chrono>  // after the check: the conversion test below needs it
#include <string>

TEST(include_cost, roster_hpp_brings_no_heavy_standard_header) {
  if (!checked) GTEST_SKIP() << "the check reads libstdc++'s include guards; this standard library is another";
#if defined(__GLIBCXX__)
  std::string found;
  for (const auto& h : heavy)
    if (h.included) found += std::string(found.empty() ? "" : ", ") + h.name;
  EXPECT_TRUE(found.empty()) << "<roster/roster.hpp> includes " << found
                             << ". Fix: keep it out of the public headers (move the body that needs it into a -inl file, "
                                "or use a roster type as duration_ns does for <chrono>).";
#endif
}

TEST(include_cost, duration_ns_converts_to_and_from_std_chrono) {
  using namespace std::chrono_literals;
  roster::duration_ns t = 1500ns;  // from std::chrono::nanoseconds
  EXPECT_EQ(t.count(), 1500);
  EXPECT_DOUBLE_EQ(t.seconds(), 1.5e-6);
  std::chrono::nanoseconds back = t;  // to std::chrono::nanoseconds
  EXPECT_EQ(back, 1500ns);
  t += roster::duration_ns(500);
  EXPECT_EQ(t, roster::duration_ns(2000));
  EXPECT_LT(roster::duration_ns(1), t);
  EXPECT_EQ((t + roster::duration_ns(1)).count(), 2001);
  // Durations of another period convert through std::chrono first.
  EXPECT_EQ(roster::duration_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(2us)).count(), 2000);
  static_assert(!std::is_convertible_v<std::chrono::microseconds, roster::duration_ns>,
                "a duration of another period must not convert silently");
}
