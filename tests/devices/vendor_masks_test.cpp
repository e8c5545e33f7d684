// Vendor masks: the grammar of CUDA_VISIBLE_DEVICES, ROCR/HIP_VISIBLE_DEVICES
// and ZE_AFFINITY_MASK, their resolution to physical devices, and the verdict
// on adapters of every backend, on recorded machine lists and a synthetic sysfs.
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using roster::adapter_info;
using roster::detail::mask_entry;
using roster::detail::parse_mask;
using roster::detail::physical_gpus;
using roster::detail::vendor_masks;

constexpr std::uint32_t nv = roster::detail::vendor_nvidia;

// The two H200s of the GPU node (UUIDs and PCI addresses as read there).
const char* const uuid0 = "GPU-aa25cade-cba2-24ea-1e2d-1e97073becb9";
const char* const uuid1 = "GPU-a090fa8b-bae9-e7db-4515-3e967f32b204";

std::array<std::uint8_t, 16> uuid_bytes(std::string_view text) {
  std::array<std::uint8_t, 16> out{};
  std::string hex;
  for (char c : text.substr(4))
    if (c != '-') hex += c;
  for (std::size_t i = 0; i < 16; ++i) out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

adapter_info gpu(std::string backend, std::uint32_t ordinal, const char* uuid, std::string pci,
                 std::string applied = {}) {
  adapter_info a;
  a.backend = std::move(backend);
  a.ordinal = ordinal;
  a.type = roster::device_type::discrete_gpu;
  a.vendor_id = nv;
  a.device_id = 0x2335;
  if (uuid) a.uuid = uuid_bytes(uuid);
  a.pci_address = std::move(pci);
  a.applied_mask = std::move(applied);
  return a;
}

physical_gpus node_list(bool with_uuids = true) {
  physical_gpus m;
  m.source = with_uuids ? "NVML" : "sysfs";
  // Listed out of order on purpose: the runtime's order is by PCI address.
  m.gpus.push_back({nv, 0x2335, "0000:00:07.0", with_uuids ? roster::detail::lower(uuid1) : ""});
  m.gpus.push_back({nv, 0x2335, "0000:00:06.0", with_uuids ? roster::detail::lower(uuid0) : ""});
  return m;
}

struct fake_env {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> fn() const {
    return [this](const char* k) -> const char* {
      auto it = vars.find(k);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

// The Vulkan view of the node: both GPUs, no mask applied by the API.
std::vector<adapter_info> vulkan_only() {
  return {gpu("vulkan", 0, uuid0, "0000:00:06.0"), gpu("vulkan", 1, uuid1, "0000:00:07.0")};
}

bool kept(const vendor_masks& m, const adapter_info& a) {
  auto v = m.judge(a);
  return !v || v->kept;
}

TEST(VendorMaskGrammar, IndicesUuidsAndMig) {
  auto m = parse_mask("CUDA_VISIBLE_DEVICES", "1, GPU-aa25cade ,MIG-4b5c8e2a-1234", nv);
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_TRUE(m.problem.empty());
  EXPECT_EQ(m.entries[0].what, mask_entry::kind::index);
  EXPECT_EQ(m.entries[0].index, 1u);
  EXPECT_EQ(m.entries[1].what, mask_entry::kind::uuid);
  EXPECT_EQ(m.entries[1].uuid, "gpu-aa25cade");
  EXPECT_EQ(m.entries[2].what, mask_entry::kind::mig);
}

TEST(VendorMaskGrammar, StopsAtTheFirstInvalidEntryAsTheRuntimeDoes) {
  auto m = parse_mask("CUDA_VISIBLE_DEVICES", "0,-1,1", nv);
  ASSERT_EQ(m.entries.size(), 1u);
  EXPECT_NE(m.problem.find("'-1'"), std::string::npos);
  auto bad = parse_mask("CUDA_VISIBLE_DEVICES", "1,gpu0,0", nv);
  ASSERT_EQ(bad.entries.size(), 1u);
  EXPECT_NE(bad.problem.find("'gpu0'"), std::string::npos);
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "-1", nv).entries.empty());
  // '-1' alone is meant (hide every GPU): no problem, so no warning in roster-info.
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "-1", nv).problem.empty());
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "0,-1", nv).problem.empty());
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "", nv).entries.empty());
  EXPECT_FALSE(parse_mask("CUDA_VISIBLE_DEVICES", "  ", nv).problem.empty());
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "99999999999", nv).entries.empty());  // past 9 digits: invalid
}

// Case 74: a repeated device is not an invalid entry that ends the list
// ("'0' is not a device index"): CUDA refuses the whole mask and shows no
// device, so every API is shown none, and the one message names the repeat.
TEST(VendorMaskGrammar, ARepeatedDeviceHidesEveryDeviceAndIsNamed) {
  for (const char* value : {"0,0", "1,1,0", "GPU-aa25,1,gpu-AA25"}) {
    auto dup = parse_mask("CUDA_VISIBLE_DEVICES", value, nv);
    EXPECT_TRUE(dup.entries.empty()) << value;
    EXPECT_NE(dup.problem.find("repeats an earlier entry"), std::string::npos) << dup.problem;
    EXPECT_EQ(dup.problem.find("not a device index"), std::string::npos) << dup.problem;
    fake_env env{{{"CUDA_VISIBLE_DEVICES", value}}};
    const auto adapters = vulkan_only();
    auto m = vendor_masks::resolve(env.fn(), adapters, node_list());
    EXPECT_FALSE(kept(m, adapters[0])) << value;
    EXPECT_FALSE(kept(m, adapters[1])) << value;
    ASSERT_EQ(m.notes().size(), 1u) << value;
    EXPECT_NE(m.notes()[0].find("CUDA_VISIBLE_DEVICES='" + std::string(value) + "': entry '"), std::string::npos)
        << m.notes()[0];
  }
  // Two sub-devices of one Level Zero device are two entries, not a repeat.
  EXPECT_EQ(parse_mask("ZE_AFFINITY_MASK", "0.0,0.1", roster::detail::vendor_intel).entries.size(), 2u);
}

TEST(VendorMaskGrammar, LevelZeroSubDevices) {
  auto m = parse_mask("ZE_AFFINITY_MASK", "0.1,1", roster::detail::vendor_intel);
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].what, mask_entry::kind::sub_device);
  EXPECT_EQ(m.entries[0].index, 0u);
  // "0.1" is not a CUDA entry.
  EXPECT_TRUE(parse_mask("CUDA_VISIBLE_DEVICES", "0.1", nv).entries.empty());
}

TEST(VendorMasks, NoVariableNoVerdict) {
  fake_env env;
  auto m = vendor_masks::resolve(env.fn(), vulkan_only(), node_list());
  EXPECT_TRUE(m.empty());
  for (const auto& a : vulkan_only()) EXPECT_FALSE(m.judge(a).has_value());
}

// The defect seen on the node: CUDA_VISIBLE_DEVICES=1 and Vulkan still showed GPU 0.
TEST(VendorMasks, IndexHidesTheOtherGpuFromVulkan) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "1"}}};
  const auto adapters = vulkan_only();
  auto m = vendor_masks::resolve(env.fn(), adapters, node_list());
  auto v0 = m.judge(adapters[0]);
  ASSERT_TRUE(v0.has_value());
  EXPECT_FALSE(v0->kept);
  EXPECT_NE(v0->reason.find("CUDA_VISIBLE_DEVICES='1'"), std::string::npos) << v0->reason;
  EXPECT_TRUE(kept(m, adapters[1]));
}

TEST(VendorMasks, IndexResolvesThroughSysfsPciOrderWithoutUuids) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "0"}}};
  const auto adapters = vulkan_only();
  auto m = vendor_masks::resolve(env.fn(), adapters, node_list(false));
  EXPECT_TRUE(kept(m, adapters[0]));
  EXPECT_FALSE(kept(m, adapters[1]));
}

TEST(VendorMasks, UuidPrefixKeepsOnlyThatGpu) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "GPU-aa25"}}};
  const auto adapters = vulkan_only();
  // Even with no machine list: the adapters' own UUIDs match the prefix.
  auto m = vendor_masks::resolve(env.fn(), adapters, physical_gpus{});
  EXPECT_TRUE(kept(m, adapters[0]));
  EXPECT_FALSE(kept(m, adapters[1]));
}

TEST(VendorMasks, EmptyAndMinusOneHideEveryGpuButNotTheCpu) {
  for (const char* value : {"", "-1"}) {
    fake_env env{{{"CUDA_VISIBLE_DEVICES", value}}};
    auto adapters = vulkan_only();
    adapter_info cpu;
    cpu.backend = "vulkan";
    cpu.type = roster::device_type::cpu;
    cpu.vendor_id = nv;  // a CPU is never masked, whatever its vendor field says
    auto m = vendor_masks::resolve(env.fn(), adapters, node_list());
    EXPECT_FALSE(kept(m, adapters[0])) << value;
    EXPECT_FALSE(kept(m, adapters[1])) << value;
    EXPECT_FALSE(m.judge(cpu).has_value());
    // An empty value is said (often a scheduler's slip); '-1' is meant.
    EXPECT_EQ(m.notes().empty(), std::string_view(value) == "-1") << value;
  }
}

TEST(VendorMasks, OtherVendorsAreUntouched) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "-1"}}};
  adapter_info amd = gpu("vulkan", 2, nullptr, "0000:41:00.0");
  amd.vendor_id = roster::detail::vendor_amd;
  auto m = vendor_masks::resolve(env.fn(), std::vector<adapter_info>{amd}, node_list());
  EXPECT_FALSE(m.judge(amd).has_value());
}

TEST(VendorMasks, TheApiThatAppliedTheMaskIsTheAuthority) {
  // CUDA applied CUDA_VISIBLE_DEVICES=1: its cuda:0 is physical GPU 1. No
  // machine list is needed, and the CUDA adapter is not masked a second time.
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "1"}}};
  std::vector<adapter_info> adapters = vulkan_only();
  adapters.push_back(gpu("cuda", 0, uuid1, "0000:00:07.0", "CUDA_VISIBLE_DEVICES"));
  auto m = vendor_masks::resolve(env.fn(), adapters, physical_gpus{});
  EXPECT_FALSE(kept(m, adapters[0]));
  EXPECT_TRUE(kept(m, adapters[1]));
  EXPECT_TRUE(kept(m, adapters[2]));
  EXPECT_NE(m.judge(adapters[2])->reason.find("applied by the cuda API"), std::string::npos);
}

TEST(VendorMasks, UnresolvableIndexHidesRatherThanExposes) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "1"}}};
  const auto adapters = vulkan_only();
  auto m = vendor_masks::resolve(env.fn(), adapters, physical_gpus{});  // no NVML, no sysfs
  for (const auto& a : adapters) {
    auto v = m.judge(a);
    ASSERT_TRUE(v.has_value());
    EXPECT_FALSE(v->kept);
    EXPECT_NE(v->reason.find("could not be resolved"), std::string::npos) << v->reason;
  }
  ASSERT_FALSE(m.notes().empty());
  EXPECT_NE(m.notes().front().find("no GPU list"), std::string::npos);
}

TEST(VendorMasks, MixedModelsNeedPciOrderForIndices) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "0"}}};
  auto machine = node_list();
  machine.gpus[0].device_id = 0x2330;  // an H100 beside an H200
  const auto adapters = vulkan_only();
  auto fastest_first = vendor_masks::resolve(env.fn(), adapters, machine);
  EXPECT_FALSE(kept(fastest_first, adapters[0]));
  EXPECT_FALSE(kept(fastest_first, adapters[1]));
  env.vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  auto pci = vendor_masks::resolve(env.fn(), adapters, machine);
  EXPECT_TRUE(kept(pci, adapters[0]));
  EXPECT_FALSE(kept(pci, adapters[1]));
}

TEST(VendorMasks, IndexPastTheEndNamesNoDevice) {
  fake_env env{{{"CUDA_VISIBLE_DEVICES", "7"}}};
  const auto adapters = vulkan_only();
  auto m = vendor_masks::resolve(env.fn(), adapters, node_list());
  EXPECT_FALSE(kept(m, adapters[0]));
  EXPECT_FALSE(kept(m, adapters[1]));
  ASSERT_FALSE(m.notes().empty());
  EXPECT_NE(m.notes().front().find("names no device"), std::string::npos);
}

TEST(VendorMasks, HipIndexesWhatRocrLeft) {
  physical_gpus machine;
  machine.source = "sysfs";
  machine.gpus = {{roster::detail::vendor_amd, 0x74a1, "0000:05:00.0", ""},
                  {roster::detail::vendor_amd, 0x74a1, "0000:15:00.0", ""},
                  {roster::detail::vendor_amd, 0x74a1, "0000:25:00.0", ""}};
  std::vector<adapter_info> adapters;
  for (std::uint32_t i = 0; i < 3; ++i) {
    adapters.push_back(gpu("vulkan", i, nullptr, machine.gpus[i].pci_address));
    adapters.back().vendor_id = roster::detail::vendor_amd;
  }
  fake_env env{{{"ROCR_VISIBLE_DEVICES", "1,2"}, {"HIP_VISIBLE_DEVICES", "1"}}};
  auto m = vendor_masks::resolve(env.fn(), adapters, machine);
  EXPECT_FALSE(kept(m, adapters[0]));
  EXPECT_FALSE(kept(m, adapters[1]));  // ROCR kept it, HIP's index 1 is ROCR's second: physical 2
  EXPECT_TRUE(kept(m, adapters[2]));
}

TEST(GpuList, SyntheticSysfsTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "roster-sysfs-test";
  fs::remove_all(root);
  auto dev = [&](const char* addr, const char* cls, const char* vendor, const char* device) {
    fs::create_directories(root / addr);
    std::ofstream(root / addr / "class") << cls << "\n";
    std::ofstream(root / addr / "vendor") << vendor << "\n";
    std::ofstream(root / addr / "device") << device << "\n";
  };
  dev("0000:00:06.0", "0x030200", "0x10de", "0x2335");
  dev("0000:00:07.0", "0x030200", "0x10de", "0x2335");
  dev("0000:00:1f.0", "0x060100", "0x8086", "0x7000");  // a bridge, not listed
  // A FIFO where a file should be must not hang the scan.
  fs::create_directories(root / "0000:00:08.0");
  ASSERT_EQ(::mkfifo((root / "0000:00:08.0" / "class").c_str(), 0600), 0);
  auto list = roster::detail::gpus_from_sysfs(root.string());
  EXPECT_EQ(list.source, "sysfs");
  ASSERT_EQ(list.gpus.size(), 2u);
  for (const auto& g : list.gpus) {
    EXPECT_EQ(g.vendor_id, nv);
    EXPECT_EQ(g.device_id, 0x2335u);
  }
  EXPECT_TRUE(roster::detail::gpus_from_sysfs((root / "missing").string()).source.empty());
  fs::remove_all(root);
}

}  // namespace
