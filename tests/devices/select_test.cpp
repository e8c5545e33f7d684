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
      " CUDA:1 ; vulkan:* ;!cpu:*;*:gpu;*:Discrete;cuda:GPU-a0a1a2a3;vulkan:a0a1a2a3-a4a5;pci=0000:00:07;"
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
  EXPECT_EQ(t[6].uuid_hex, "a0a1a2a3a4a5");
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

// Case 30 (docs/hostile.md): 'cuda:12-15' dropped its dash and looked for
// the UUID prefix 1215 (no circuit, no word); 'pci=::', 'pci=.' and an
// address of five parts were taken and matched nothing. Ordinal ranges are
// not in the grammar, a dash stands only where a UUID has one, and a PCI
// address is [DOMAIN:]BUS:DEVICE[.FUNCTION]: anything else is an error
// naming the term.
TEST(selector, ranges_stray_dashes_and_bad_pci_addresses_are_errors_naming_the_term) {
  struct bad {
    const char* selector;
    const char* term;
    const char* why;
  };
  for (auto [text, term, why] :
       {bad{"cuda:12-15", "'cuda:12-15'", "ordinal range"},
        bad{"*:12345678-1234", "'*:12345678-1234'", "(*:GPU-12345678-1234)"},
        bad{"cuda:0;*:0-1", "'*:0-1'", "'*:0;*:1'"},
        bad{"cuda:GPU-12-15", "'cuda:GPU-12-15'", "'-' where a UUID has none"},
        bad{"vulkan:a0a1-a2a3", "'vulkan:a0a1-a2a3'", "'-' where a UUID has none"},
        bad{"cuda:0b8a5f29--1234", "'cuda:0b8a5f29--1234'", "'-' where a UUID has none"},
        bad{"pci=::", "'pci=::'", "empty part"},
        bad{"pci=.", "'pci=.'", "PCI function"},
        bad{"pci=0000", "'pci=0000'", "no BUS:DEVICE"},
        bad{"pci=0000:00", "'pci=0000:00'", "more than 2"},
        bad{"*:pci=0000:00:07.0.0.0", "'*:pci=0000:00:07.0.0.0'", "PCI function"},
        bad{"pci=0:0:0:07", "'pci=0:0:0:07'", "more than three"},
        bad{"pci=0000:00:20", "'pci=0000:00:20'", "past 1f"},
        bad{"!cuda:pci=00:07.8", "'!cuda:pci=00:07.8'", "PCI function"}}) {
    auto s = roster::parse_selector(text);
    ASSERT_FALSE(s) << text << " parsed into " << s->terms.size() << " terms";
    EXPECT_EQ(s.error().code(), roster::errc::invalid_argument) << text;
    EXPECT_NE(s.error().what().find(std::string("term ") + term), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().what().find(why), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find("\nFix: "), std::string::npos) << s.error().message();
  }
  // The range's error lists the terms it stands for.
  auto range = roster::parse_selector("cuda:12-15");
  ASSERT_FALSE(range);
  EXPECT_NE(range.error().what().find("'cuda:12;cuda:13;cuda:14;cuda:15'"), std::string::npos)
      << range.error().message();
  // Dashes where a UUID has them, and short PCI parts, are padded and kept.
  auto good = roster::parse_selector("cuda:GPU-0b8a5f29-3c1d;vulkan:0b8a5f29-3c1d-4e5f;pci=0:7;pci=1:2:3.1");
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_EQ(good->terms[0].uuid_hex, "0b8a5f293c1d");
  EXPECT_EQ(good->terms[1].uuid_hex, "0b8a5f293c1d4e5f");
  EXPECT_EQ(good->terms[2].pci, "0000:00:07");
  EXPECT_EQ(good->terms[3].pci, "0001:02:03.1");
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

// Case 33 (docs/hostile.md): every UUID printed with NVIDIA's "GPU-", a
// CPU's too. A UUID is written as its source writes it, and a selector's
// UUID prefix matches it in either form.
TEST(selector, uuids_print_in_their_sources_form_and_match_either_way) {
  using roster::device_type;
  auto nvidia = adapter("cuda", 0, device_type::discrete_gpu, 10, "0000:00:06.0");
  nvidia.vendor_id = 0x10de;
  auto amd = adapter("vulkan", 1, device_type::discrete_gpu, 11, "0000:00:07.0");
  amd.vendor_id = 0x1002;
  auto grace = adapter("cpu", 0, device_type::cpu, 12, "");
  grace.vendor_id = 0x10de;  // an NVIDIA CPU is still no GPU
  EXPECT_EQ(nvidia.uuid_string(), "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  EXPECT_EQ(amd.uuid_string(), "b0b1b2b3-b4b5-b6b7-b8b9-babbbcbdbebf");
  EXPECT_FALSE(grace.uuid_string().starts_with("GPU-")) << grace.uuid_string();
  for (const auto* a : {&nvidia, &amd, &grace}) {
    const std::string u = a->uuid_string();
    const std::string hex8 = u.substr(u.starts_with("GPU-") ? 4 : 0, 8);
    for (const std::string& term : {"*:GPU-" + hex8, "*:" + hex8}) {
      auto s = roster::parse_selector(term);
      ASSERT_TRUE(s) << term << ": " << s.error().message();
      EXPECT_TRUE(s->judge(*a).kept) << term << " does not match " << u;
    }
  }
}

TEST(selector, normalizes_pci_addresses) {
  EXPECT_EQ(roster::normalize_pci("0000:00:07.0"), "0000:00:07.0");
  EXPECT_EQ(roster::normalize_pci("00:07.0"), "0000:00:07.0");
  EXPECT_EQ(roster::normalize_pci("0000:3B:00"), "0000:3b:00.0");
  EXPECT_EQ(roster::normalize_pci(""), "");
}

}  // namespace
