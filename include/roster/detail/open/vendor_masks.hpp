#pragma once
// Vendor masks: the scheduler's word on which GPUs this job may use, applied
// to every backend. CUDA_VISIBLE_DEVICES is honoured by the CUDA runtime but
// not by the Vulkan loader, so a Vulkan adapter of a GPU the job was not given
// would otherwise become a circuit. Each mask is resolved to physical devices
// (UUID, else PCI address) and every adapter of that vendor is judged against
// them, whatever backend reports it.
//
// Resolution, most exact first: the adapters of a backend whose API already
// applied the mask (adapter_info::applied_mask names it) are the visible set;
// else the mask's entries are resolved against the machine's GPU list (NVML,
// else sysfs), ordered as the vendor's runtime orders them. An entry that cannot
// be resolved hides every adapter it might name: hide rather than expose.

#include <roster/backend.hpp>
#include <roster/detail/base/function_ref.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster::detail {

/// One GPU as the machine lists it (NVML or sysfs), before any mask.
struct physical_gpu {
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::string pci_address;  ///< "0000:00:06.0"
  std::string uuid;         ///< "gpu-…" lower case; empty when the source does not know it (sysfs)
};

/// The GPU list and where it came from ("NVML", "sysfs"; empty when none).
struct physical_gpus {
  std::vector<physical_gpu> gpus;
  std::string source;
};

inline constexpr std::uint32_t vendor_nvidia = 0x10de;
inline constexpr std::uint32_t vendor_amd = 0x1002;

// Returns an adapter's UUID as the masks write one, "gpu-..." in lower case
// whatever form uuid_string() gives its vendor; "" without a UUID.
inline std::string mask_uuid(const adapter_info& a) {
  if (!a.has_uuid()) return {};
  std::string u = lower(a.uuid_string());
  return u.starts_with("gpu-") ? u : "gpu-" + u;
}
inline constexpr std::uint32_t vendor_intel = 0x8086;

/// One entry of a mask as written.
struct mask_entry {
  enum class kind : std::uint8_t { index, uuid, mig, sub_device };
  kind what = kind::index;
  std::uint32_t index = 0;  ///< for index and sub_device (the device part of "0.1")
  std::string uuid;         ///< for uuid and mig: lower case, as written ("gpu-8932", "mig-…")
  std::string text;
};

/// A mask variable as parsed: the entries before the first invalid one (the
/// runtime ignores the rest), and what was wrong.
struct parsed_mask {
  std::string variable;
  std::string value;
  std::uint32_t vendor_id = 0;
  std::vector<mask_entry> entries;
  std::string problem;  ///< why parsing stopped early; empty when every entry was read
};

// Reads a whole non-negative number of at most 9 digits; nullopt otherwise.
inline std::optional<std::uint32_t> mask_index(std::string_view s) noexcept {
  if (s.size() > 9) return std::nullopt;
  auto v = parse_uint(s, 999999999);
  return v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
}

// Whether s is a UUID prefix as CUDA accepts it: "GPU-" or "MIG-" then hex and dashes.
inline bool mask_uuid_body(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  return true;
}

/// Parses a comma-separated mask the way the vendor's runtime reads it: indices,
/// "GPU-" UUID prefixes and "MIG-" ids (CUDA, ROCm), or "device.sub" pairs
/// (Level Zero). Parsing stops at the first invalid entry ("-1" among them),
/// so "0,-1,1" leaves only device 0 and "" or "-1" leaves none.
inline parsed_mask parse_mask(std::string_view variable, std::string_view value, std::uint32_t vendor_id) {
  parsed_mask m;
  m.variable = std::string(variable);
  m.value = std::string(value);
  m.vendor_id = vendor_id;
  std::string_view rest = value;
  if (trim(rest).empty()) {
    m.problem = "it is empty, which leaves no device visible";
    return m;
  }
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view raw = trim(rest.substr(0, comma));
    mask_entry e;
    e.text = std::string(raw);
    const std::string low = lower(raw);
    bool ok = true;
    if (auto i = mask_index(raw)) {
      e.what = mask_entry::kind::index;
      e.index = *i;
    } else if (low.starts_with("gpu-") && mask_uuid_body(std::string_view(low).substr(4))) {
      e.what = mask_entry::kind::uuid;
      e.uuid = low;
    } else if (low.starts_with("mig-") && low.size() > 4 && vendor_id == vendor_nvidia) {
      e.what = mask_entry::kind::mig;
      e.uuid = low;
    } else if (const auto dot = raw.find('.'); vendor_id == vendor_intel && dot != std::string_view::npos &&
                                              mask_index(raw.substr(0, dot)) && mask_index(raw.substr(dot + 1))) {
      e.what = mask_entry::kind::sub_device;
      e.index = *mask_index(raw.substr(0, dot));
    } else {
      ok = false;
    }
    // A repeated device ("0,0") is not an end of the list: the vendor's
    // runtime refuses the whole mask and shows no device at all (CUDA's
    // cuInit fails), so every API is shown none, and the message names the repeat.
    if (ok)
      for (const auto& seen : m.entries)
        if (e.what != mask_entry::kind::sub_device && seen.what == e.what && seen.index == e.index &&
            seen.uuid == e.uuid) {
          m.entries.clear();
          m.problem = "entry '" + printable(e.text, 64) + "' repeats an earlier entry, and the vendor's runtime " +
                      "refuses a mask that names a device twice, so it hides every device of this vendor from " +
                      "every API (write each device once)";
          return m;
        }
    if (!ok) {
      // '-1' is the runtimes' way to end the list (CUDA_VISIBLE_DEVICES=-1
      // hides every GPU): a problem only when entries follow it.
      if (raw != "-1")
        m.problem = "entry '" + printable(e.text, 64) +
                    "' is not a device index or UUID, so it and every entry after it are ignored";
      else if (comma != std::string_view::npos)
        m.problem = "entry '-1' hides it and every entry after it";
      return m;
    }
    m.entries.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return m;
}

/// How a mask judged one adapter.
struct mask_verdict {
  bool kept = true;
  std::string reason;  ///< names the variable and why
};

/// The masks in force and the devices each leaves visible.
class vendor_masks {
 public:
  /// Returns whether no mask variable is set.
  [[nodiscard]] bool empty() const noexcept { return masks_.empty(); }
  /// Returns the parsed masks, in the order they apply.
  [[nodiscard]] const std::vector<parsed_mask>& masks() const noexcept { return masks_; }
  /// Returns what could not be resolved or was ignored, one line each, for the trace.
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }

  /// Judges one adapter; nullopt when no mask of its vendor is set (a CPU is never masked).
  [[nodiscard]] std::optional<mask_verdict> judge(const adapter_info& a) const {
    if (a.type == device_type::cpu) return std::nullopt;
    std::optional<mask_verdict> out;
    for (const auto& r : resolved_) {
      if (masks_[r.mask].vendor_id != a.vendor_id) continue;
      mask_verdict v = judge_one(masks_[r.mask], r, a);
      if (!v.kept) return v;  // the first mask that hides it says why
      out = std::move(v);
    }
    return out;
  }

  /// The mask variables, in the order they apply (ROCR_VISIBLE_DEVICES
  /// first; HIP_VISIBLE_DEVICES then indexes what it left).
  struct variable {
    const char* name;
    std::uint32_t vendor;
  };
  static constexpr variable variables[] = {{"CUDA_VISIBLE_DEVICES", vendor_nvidia},
                                           {"ROCR_VISIBLE_DEVICES", vendor_amd},
                                           {"HIP_VISIBLE_DEVICES", vendor_amd},
                                           {"ZE_AFFINITY_MASK", vendor_intel}};

  /// Returns whether any mask variable is set (is_set(name) says for one).
  template <class IsSet>
  [[nodiscard]] static bool any_set(IsSet&& is_set) {
    for (const auto& v : variables)
      if (is_set(v.name)) return true;
    return false;
  }

  /// Resolves the masks set in the environment (read through getenv_fn)
  /// against the adapters every backend reported and the machine's GPU list.
  static vendor_masks resolve(function_ref<const char*(const char*)> getenv_fn,
                              std::span<const adapter_info> adapters, const physical_gpus& machine) {
    auto copy = [&machine] { return machine; };
    return resolve(getenv_fn, adapters, function_ref<physical_gpus()>(copy));
  }

  /// As above, asking list_machine() for the machine's GPU list only when a
  /// mask is set that no backend's API applied.
  static vendor_masks resolve(function_ref<const char*(const char*)> getenv_fn,
                              std::span<const adapter_info> adapters, function_ref<physical_gpus()> list_machine) {
    vendor_masks out;
    out.masks_.reserve(std::size(variables));
    for (const auto& v : variables)
      if (const char* value = getenv_fn(v.name)) out.masks_.push_back(parse_mask(v.name, value, v.vendor));
    if (out.masks_.empty()) return out;
    std::optional<physical_gpus> listed;
    auto machine_list = [&]() -> const physical_gpus& {
      if (!listed) listed = list_machine();
      return *listed;
    };
    const char* order = getenv_fn("CUDA_DEVICE_ORDER");
    const bool pci_order = order != nullptr && lower(trim(order)) == "pci_bus_id";

    std::vector<const physical_gpu*> rocr_left;  // what ROCR_VISIBLE_DEVICES left, for HIP's indices
    bool rocr_set = false;
    out.resolved_.reserve(out.masks_.size());
    for (const auto& m : out.masks_) {
      resolved_mask r;
      r.mask = static_cast<std::size_t>(&m - out.masks_.data());
      if (!m.problem.empty()) out.notes_.push_back(m.variable + "='" + printable(m.value) + "': " + m.problem);
      // The backend whose API applied this mask knows exactly what it left visible.
      for (const auto& a : adapters)
        if (a.applied_mask == m.variable) {
          r.authority = a.backend;
          if (a.has_uuid()) r.uuids.push_back(mask_uuid(a));
          if (!a.pci_address.empty()) r.pcis.push_back(a.pci_address);
        }
      if (!r.authority.empty()) {
        out.resolved_.push_back(std::move(r));
        continue;
      }
      // Else the machine's list, in the runtime's order.
      const physical_gpus& machine = machine_list();
      std::vector<const physical_gpu*> list;
      if (m.variable == "HIP_VISIBLE_DEVICES" && rocr_set) {
        list = rocr_left;
      } else {
        for (const auto& g : machine.gpus)
          if (g.vendor_id == m.vendor_id) list.push_back(&g);
        std::sort(list.begin(), list.end(),
                  [](const physical_gpu* x, const physical_gpu* y) { return x->pci_address < y->pci_address; });
      }
      bool order_known = !machine.source.empty();
      std::string order_problem = machine.source.empty() ? "no GPU list (no NVML, no sysfs)" : std::string{};
      if (order_known && m.vendor_id == vendor_nvidia && !pci_order) {
        // CUDA's default order is fastest first: the same as PCI order only
        // when every GPU is the same model.
        for (const auto* g : list)
          if (g->device_id != list.front()->device_id) {
            order_known = false;
            order_problem = "the GPUs differ and CUDA_DEVICE_ORDER is not PCI_BUS_ID, so CUDA's index order is unknown";
          }
      }
      std::vector<const physical_gpu*> left;
      for (const auto& e : m.entries) {
        switch (e.what) {
          case mask_entry::kind::index:
          case mask_entry::kind::sub_device:
            if (!order_known) {
              r.unresolved.push_back(e.text);
              out.notes_.push_back(m.variable + " entry '" + printable(e.text, 64) + "' could not be resolved: " + order_problem +
                                   "; every adapter it might name is hidden");
            } else if (e.index < list.size()) {
              left.push_back(list[e.index]);
            } else {
              out.notes_.push_back(m.variable + " entry '" + e.text + "' names no device (" +
                                   std::to_string(list.size()) + " listed by " + machine.source + ")");
            }
            break;
          case mask_entry::kind::uuid: {
            // UUID prefixes match the adapters' own UUIDs at judge time too.
            r.uuid_prefixes.push_back(e.uuid);
            for (const auto* g : list)
              if (!g->uuid.empty() && g->uuid.starts_with(e.uuid)) left.push_back(g);
            break;
          }
          case mask_entry::kind::mig:
            // A MIG instance runs CUDA work only; its parent GPU's other adapters stay hidden.
            out.notes_.push_back(m.variable + " entry '" + e.text +
                                 "' is a MIG instance: only CUDA can use it, so no other API's adapter of its GPU is "
                                 "kept");
            break;
        }
      }
      for (const auto* g : left) {
        if (!g->uuid.empty()) r.uuids.push_back(g->uuid);
        if (!g->pci_address.empty()) r.pcis.push_back(g->pci_address);
      }
      if (m.variable == "ROCR_VISIBLE_DEVICES") {
        rocr_set = true;
        rocr_left = left;
      }
      r.source = machine.source;
      out.resolved_.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct resolved_mask {
    std::size_t mask = 0;                    ///< index into masks_
    std::string authority;                   ///< backend whose API applied it; empty when resolved here
    std::string source;                      ///< the GPU list used ("NVML", "sysfs")
    std::vector<std::string> uuids;          ///< visible devices' UUIDs, lower case "gpu-…"
    std::vector<std::string> pcis;           ///< visible devices' PCI addresses
    std::vector<std::string> uuid_prefixes;  ///< UUID entries as written
    std::vector<std::string> unresolved;     ///< entries that could not be resolved
  };

  static mask_verdict judge_one(const parsed_mask& m, const resolved_mask& r, const adapter_info& a) {
    const std::string what = m.variable + "='" + printable(m.value) + "'";
    if (!r.authority.empty() && a.applied_mask == m.variable)
      return {true, what + " applied by the " + a.backend + " API"};
    const std::string uuid = mask_uuid(a);
    if (!uuid.empty()) {
      for (const auto& u : r.uuids)
        if (u == uuid) return {true, what + " lists it (UUID " + uuid + ")"};
      for (const auto& p : r.uuid_prefixes)
        if (uuid.starts_with(p)) return {true, what + " lists it (UUID prefix " + p + ")"};
    }
    if (!a.pci_address.empty())
      for (const auto& p : r.pcis)
        if (p == a.pci_address) return {true, what + " lists it (PCI " + p + ")"};
    if (!r.unresolved.empty())
      return {false, "hidden by " + what + ": entry '" + r.unresolved.front() +
                         "' could not be resolved to a device, so it is hidden rather than exposed"};
    if (uuid.empty() && a.pci_address.empty())
      return {false, "hidden by " + what + ": the adapter reports no UUID or PCI address to match"};
    return {false, "hidden by " + what + (r.authority.empty() ? std::string{} : " (as the " + r.authority + " API left it)") +
                       ": it is not one of the devices it lists"};
  }

  std::vector<parsed_mask> masks_;
  std::vector<resolved_mask> resolved_;
  std::vector<std::string> notes_;
};

}  // namespace roster::detail
