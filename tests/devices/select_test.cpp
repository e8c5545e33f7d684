// The selector grammar: good terms parse to what they say, bad terms are
// errors that quote the term and end with a Fix: part.

#include "test_backends.hpp"

#include <gtest/gtest.h>

namespace {
using roster::selector_what;

roster::adapter_info adapter(const char* backend, std::uint32_t ordinal, roster::device_type type,
                             std::uint8_t uuid_seed, const char* pci) {
  roster::adapter_info a;
  a.backend = backend;
  a.ordinal = ordinal;
  a.type = type;
  if (uuid_seed != 0) a.uuid = devices_test::uuid_of(uuid_seed);
  a.pci_address = pci;
  return a;
}

TEST(selector, parses_every_form_of_term) {
  auto s = roster::parse_selector(
      " CUDA:1 ; vulkan:* ;!cpu:*;*:gpu;*:Discrete;cuda:GPU-a0a1a2a3;vulkan:a0a1-a2a3;pci=0000:00:07;"
      "!cuda:pci=00:06.0");
  ASSERT_TRUE(s) << s.error().message();
  ASSERT_EQ(s->terms.size(), 9u);
  const auto& t = s->terms;
  EXPECT_EQ(t[0].backend, "cuda");
  EXPECT_EQ(t[0].what, selector_what::ordinal);
  EXPECT_EQ(t[0].ordinal, 1u);
  EXPECT_EQ(t[0].text, "CUDA:1");
  EXPECT_EQ(t[1].what, selector_what::any);
  EXPECT_TRUE(t[2].exclude);
  EXPECT_EQ(t[2].backend, "cpu");
  EXPECT_EQ(t[3].backend, "*");
  EXPECT_EQ(t[3].what, selector_what::type);
  EXPECT_EQ(t[3].type, "gpu");
  EXPECT_EQ(t[4].type, "discrete");
  EXPECT_EQ(t[5].what, selector_what::uuid_prefix);
  EXPECT_EQ(t[5].uuid_hex, "a0a1a2a3");
  EXPECT_EQ(t[6].uuid_hex, "a0a1a2a3");
  EXPECT_EQ(t[7].what, selector_what::pci);
  EXPECT_EQ(t[7].backend, "*");
  EXPECT_EQ(t[7].pci, "0000:00:07");
  EXPECT_TRUE(t[8].exclude);
  EXPECT_EQ(t[8].backend, "cuda");
  EXPECT_EQ(t[8].pci, "0000:00:06.0");
}

TEST(selector, blank_is_empty_and_keeps_everything) {
  for (const char* text : {"", "  "}) {
    auto s = roster::parse_selector(text);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->empty());
    EXPECT_TRUE(s->judge(adapter("cuda", 0, roster::device_type::discrete_gpu, 0, "")).kept);
  }
}

TEST(selector, bad_terms_are_named_in_the_error) {
  struct bad {
    const char* selector;
    const char* term;
  };
  for (auto [text, term] : {bad{"cuda", "'cuda'"},
                            bad{"cuda:0;;vulkan:0", "''"},
                            bad{"cuda:0;", "''"},
                            bad{":0", "':0'"},
                            bad{"cuda:", "'cuda:'"},
                            bad{"cuda:banana", "'cuda:banana'"},
                            bad{"cuda:-1", "'cuda:-1'"},
                            bad{"cuda:2147483648", "'cuda:2147483648'"},
                            bad{"cu da:0", "'cu da:0'"},
                            bad{"cuda:GPU-xyz", "'cuda:GPU-xyz'"},
                            bad{"cuda:abc", "'cuda:abc'"},
                            bad{"pci=", "'pci='"},
                            bad{"pci=00:0g", "'pci=00:0g'"},
                            bad{"vulkan:*;!", "'!'"}}) {
    auto s = roster::parse_selector(text);
    ASSERT_FALSE(s) << text;
    EXPECT_EQ(s.error().code(), roster::errc::invalid_argument) << text;
    EXPECT_NE(s.error().what().find(std::string("term ") + term), std::string::npos)
        << text << ": " << s.error().message();
    EXPECT_FALSE(s.error().fix().empty()) << text;
  }
}

TEST(selector, from_env_names_the_variable) {
  setenv("ROSTER_DEVICE_SELECTOR", "cuda:oops", 1);
  auto s = roster::selector_from_env();
  unsetenv("ROSTER_DEVICE_SELECTOR");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message().rfind("ROSTER_DEVICE_SELECTOR: ", 0), 0u) << s.error().message();
  EXPECT_TRUE(roster::selector_from_env());
}

TEST(selector, judges_adapters) {
  using roster::device_type;
  auto cuda0 = adapter("cuda", 0, device_type::discrete_gpu, 10, "0000:00:06.0");
  auto cuda1 = adapter("cuda", 1, device_type::discrete_gpu, 11, "0000:00:07.0");
  auto vk0 = adapter("vulkan", 0, device_type::discrete_gpu, 10, "0000:00:06.0");
  auto lvp = adapter("vulkan", 2, device_type::cpu, 12, "");
  auto cpu = adapter("cpu", 0, device_type::cpu, 0, "");

  auto s = roster::parse_selector("cuda:1;vulkan:*");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->judge(cuda0).kept);
  EXPECT_EQ(s->judge(cuda0).reason, "matches no selector term");
  EXPECT_TRUE(s->judge(cuda1).kept);
  EXPECT_EQ(s->judge(cuda1).order, 0u);
  EXPECT_EQ(s->judge(vk0).order, 1u);
  EXPECT_FALSE(s->judge(cpu).kept);

  s = roster::parse_selector("!cpu:*");
  EXPECT_FALSE(s->judge(cpu).kept);
  EXPECT_EQ(s->judge(cpu).reason, "excluded by selector term '!cpu:*'");
  EXPECT_TRUE(s->judge(lvp).kept);

  s = roster::parse_selector("*:gpu");
  EXPECT_TRUE(s->judge(vk0).kept);
  EXPECT_FALSE(s->judge(lvp).kept);

  s = roster::parse_selector("*:cpu");
  EXPECT_TRUE(s->judge(lvp).kept);
  EXPECT_TRUE(s->judge(cpu).kept);
  EXPECT_FALSE(s->judge(cuda0).kept);

  s = roster::parse_selector("*:GPU-b0b1b2b3");  // uuid_of(11)
  EXPECT_TRUE(s->judge(cuda1).kept);
  EXPECT_FALSE(s->judge(cuda0).kept);
  EXPECT_FALSE(s->judge(cpu).kept);  // no UUID never matches
  s = roster::parse_selector("vulkan:a0a1a2");
  EXPECT_TRUE(s->judge(vk0).kept);
  EXPECT_FALSE(s->judge(cuda0).kept);

  s = roster::parse_selector("pci=0000:00:07");
  EXPECT_TRUE(s->judge(cuda1).kept);
  EXPECT_FALSE(s->judge(cuda0).kept);
  EXPECT_FALSE(s->judge(cpu).kept);

  s = roster::parse_selector("*:*;!cuda:0;!vulkan:cpu");
  EXPECT_FALSE(s->judge(cuda0).kept);
  EXPECT_TRUE(s->judge(cuda1).kept);
  EXPECT_FALSE(s->judge(lvp).kept);
  EXPECT_TRUE(s->judge(cpu).kept);
}

TEST(selector, normalizes_pci_addresses) {
  EXPECT_EQ(roster::normalize_pci("0000:00:07.0"), "0000:00:07.0");
  EXPECT_EQ(roster::normalize_pci("00:07.0"), "0000:00:07.0");
  EXPECT_EQ(roster::normalize_pci("0000:3B:00"), "0000:3b:00.0");
  EXPECT_EQ(roster::normalize_pci(""), "");
}

}  // namespace
