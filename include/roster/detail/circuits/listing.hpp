#pragma once
// Private: which backends a scan asks (list_adapters), and the rule by which
// a decision's scan leaves GPU APIs unasked (settled_without), with the
// record helpers the circuits' order uses too.

#include <roster/backend.hpp>
#include <roster/error.hpp>
#include <roster/select.hpp>
#include <roster/spec.hpp>
#include <roster/tuning/record.hpp>
#include <roster/detail/backend/backend_id.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>
#include <roster/detail/circuits/lazy_scan.hpp>
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/open/requirement.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roster {
namespace detail {

// The record of an adapter, or null.
inline const tuning_record* record_of(std::span<const tuning_record> records, const adapter_info& a) {
  return records.empty() ? nullptr : find_tuning(records, a).record;
}

// Compares two records for work over `ops` and `type` (either element type
// when unset: double first): > 0 when `candidate` is faster beyond the noise.
inline int measured(const tuning_record* current, const tuning_record* candidate, op_set ops,
                    std::optional<element_type> type) {
  if (current == nullptr || candidate == nullptr) return 0;
  if (type) return compare_records(*current, *candidate, ops, *type);
  const int d = compare_records(*current, *candidate, ops, element_type::f64);
  return d != 0 ? d : compare_records(*current, *candidate, ops, element_type::f32);
}

inline std::string triad_text(const tuning_record* r) {
  if (r == nullptr) return "no record";
  const auto t = r->triad_bandwidth();
  return t ? "triad " + fixed(*t) + " GB/s" : "no triad figure";
}

// What the environment asks of a scan: the selector, the requirement and the records.
struct scan_inputs {
  selector sel;
  std::optional<requirement> req;
  std::span<const tuning_record> records;
};

// The backends a decision may leave unasked: built-in GPU APIs whose
// adapters are the PCI devices of the machine's GPU list, or software
// devices of type cpu (lavapipe, PoCL) that merge into the host CPU's
// circuit. Any other backend (the CPU's, a plugin's) is always asked.
inline bool deferrable_backend(std::string_view id) {
  auto& h = the_lazy_scan_hook();
  std::lock_guard lock(h.mutex);
  if (h.replaced)
    return std::find(h.replaced->deferrable.begin(), h.replaced->deferrable.end(), id) != h.replaced->deferrable.end();
  return id == "cuda" || id == "vulkan" || id == "opencl";
}

// The GPU list the test hook put in place, if any.
inline std::optional<physical_gpus> replaced_gpus() {
  auto& h = the_lazy_scan_hook();
  std::lock_guard lock(h.mutex);
  if (h.replaced) return h.replaced->gpus;
  return std::nullopt;
}

// The machine's GPU list as the lazy scan reads it.
inline physical_gpus lazy_scan_gpus() {
  if (auto g = replaced_gpus()) return std::move(*g);
  return machine_gpus();
}

// A backend a lazy scan has not asked yet.
struct registered_backend_view {
  std::string_view id;
  const backend_entry* entry = nullptr;
};

// Whether the backends asked so far settle the decision, so that those in
// `left` need not be started; else says in `why` what one of them might
// change and returns in `next` the one to ask (the one whose record might
// lead, else the first left). Settled when the machine's GPU list (NVML and
// sysfs: no API started) could be read, every GPU on it that the vendor masks
// keep is seen by an adapter asked, and no record of a backend left out
// could put its adapter ahead: one that leads, or one that measured faster
// beyond the noise than an asked adapter it could share a circuit with (of
// the same UUID; any asked adapter for a record of a device without a UUID,
// such as lavapipe's or PoCL's, or of a model). A circuit whose preferred
// adapter has no record is never reordered by one, as in order_adapters.
inline bool settled_without(std::span<const std::pair<adapter_info, int>> listed,
                            std::span<const registered_backend_view> left, const scan_inputs& in,
                            const physical_gpus& view, std::string& why, std::size_t& next) {
  next = 0;
  if (view.source.empty()) {
    why = "the machine's GPU list (NVML, sysfs) could not be read";
    return false;
  }
  std::vector<adapter_info> asked;
  asked.reserve(listed.size());
  for (const auto& l : listed) asked.push_back(l.first);
  const auto masks = vendor_masks::resolve(
      [](const char* name) -> const char* {
        auto v = env_text(name);
        return v ? v->data() : nullptr;
      },
      asked, view);
  for (const auto& g : view.gpus) {
    adapter_info stand_in;
    stand_in.type = device_type::discrete_gpu;
    stand_in.vendor_id = g.vendor_id;
    stand_in.device_id = g.device_id;
    stand_in.pci_address = g.pci_address;
    if (auto v = masks.judge(stand_in); v && !v->kept) continue;
    const std::string pci = normalize_pci(g.pci_address);
    const bool seen = std::any_of(asked.begin(), asked.end(), [&](const adapter_info& a) {
      return (!pci.empty() && normalize_pci(a.pci_address) == pci) ||
             (!g.uuid.empty() && a.has_uuid() && lower(a.uuid_string()) == g.uuid);
    });
    if (!seen) {
      why = "the GPU at PCI " + (pci.empty() ? std::string("(unknown)") : pci) + " (" + view.source +
            ") is seen by no backend asked yet";
      return false;
    }
  }
  for (std::size_t i = 0; i < left.size(); ++i)
    for (const auto& r : in.records) {
      if (r.backend != left[i].id) continue;
      const bool by_uuid = r.device.rfind("model:", 0) != 0 && r.device.find('/') == std::string::npos;
      bool beaten = !r.leads;
      for (const auto& a : asked)
        if (beaten && (!by_uuid || (a.has_uuid() && same_device_key(r.device, a.uuid_string()))))
          beaten = measured(record_of(in.records, a), &r, {}, std::nullopt) <= 0;
      if (!beaten) {
        why = "its record of " + printable(r.device, 64) + " (" + triad_text(&r) +
              (r.leads ? ", the standing preference" : "") + ") might put it ahead";
        next = i;
        return false;
      }
    }
  return true;
}

// The machine's GPU list from sysfs alone (no driver library started, about a
// millisecond), which tells early whether a decision's scan will ask its first
// GPU API; the test hook's list where one is put in place.
inline physical_gpus lazy_scan_early_gpus() {
  if (auto g = replaced_gpus()) return std::move(*g);
  return gpus_from_sysfs(sysfs_root() + "/bus/pci/devices");
}

// Whether a vendor mask variable is set: then only the whole list (NVML's
// UUIDs) resolves which GPUs it keeps, and no API is started early.
inline bool vendor_mask_set() {
  return vendor_masks::any_set([](const char* name) { return env_text(name).has_value(); });
}

// One backend's enumeration on a thread of its own: a decision's scan asks
// its first GPU API beside the read of the machine's GPU list (NVML's start
// is ~20 ms on an H200 node and overlaps cuInit's ~190: 196 ms against 206
// one after the other). Where no thread can be made, the scan asks as before.
class early_enumeration {
 public:
  explicit early_enumeration(const backend_entry& b) : entry_(&b) {
    started_ = ::pthread_create(&thread_, nullptr, &run, this) == 0;
  }
  early_enumeration(const early_enumeration&) = delete;
  early_enumeration& operator=(const early_enumeration&) = delete;
  ~early_enumeration() { join(); }
  bool started() const noexcept { return started_; }
  const backend_entry* entry() const noexcept { return entry_; }
  // Waits for the enumeration and returns what it gave.
  expected<std::vector<adapter_info>> take() {
    join();
    return std::move(*result_);
  }

 private:
  static void* run(void* self) {
    auto* e = static_cast<early_enumeration*>(self);
    try {
      e->result_.emplace(enumerate_adapters(*e->entry_->registration));
    } catch (...) {
      e->result_.emplace(make_error(errc::internal, "the enumerator threw",
                                    "report it to the backend's authors; ROSTER_DEVICE_SELECTOR can leave it out"));
    }
    return nullptr;
  }
  void join() {
    if (started_) ::pthread_join(thread_, nullptr);
    started_ = false;
  }
  const backend_entry* entry_;
  pthread_t thread_{};
  bool started_ = false;
  std::optional<expected<std::vector<adapter_info>>> result_;
};

// Every backend's adapters, except the backends the selector or the
// requirement rules out, which are not asked (their API is never started).
// With `lazy` (a decision's scan, no selector and no requirement set), the
// GPU APIs are asked one at a time in rank order until the rest cannot
// change the decision (settled_without); those left go to `not_asked`.
inline std::vector<std::pair<adapter_info, int>> list_adapters(const scan_inputs& in,
                                                               std::vector<std::pair<std::string, error>>& failures,
                                                               std::vector<std::string>& not_asked,
                                                               std::vector<std::string>& lines, bool lazy) {
  std::vector<std::pair<adapter_info, int>> listed;
  std::optional<std::string> named;  // ROSTER_DEVICE's backend: always asked
  if (auto v = env_nonblank(env_device))
    if (auto spec = parse_spec(*v)) named = spec->backend;
  lazy = lazy && in.sel.empty() && !in.req;
  std::vector<registered_backend_view> deferred;
  auto take = [&](const backend_entry& b, expected<std::vector<adapter_info>> list) {
    const std::string id(b.id());
    if (!list) {
      lines.push_back("backend " + id + ": dropped, its enumerator failed: " + std::string(list.error().what()));
      failures.emplace_back(id, list.error());
      return;
    }
    if (list->empty()) lines.push_back("backend " + id + ": no adapters");
    for (auto& a : *list) {
      if (a.backend.empty()) a.backend = id;
      listed.emplace_back(std::move(a), b.rank);
    }
  };
  auto ask = [&](const backend_entry& b) { take(b, enumerate_adapters(*b.registration)); };
  for (const auto& b : registered_backends()) {
    const std::string id(b.id());
    if (auto conflict = backend_conflict(b.id()))  // acquire refuses this id
      lines.push_back("backend " + id + ": conflict: " + conflict->message());
    std::string why = in.sel.rules_out(b.id());
    if (why.empty() && in.req) why = in.req->rules_out(b.id());
    if (!why.empty()) {
      lines.push_back("backend " + id + ": not asked: " + why);
      continue;
    }
    if (lazy && deferrable_backend(id) && named != id) {
      deferred.push_back({b.id(), &b});
      continue;
    }
    ask(b);
  }
  if (deferred.empty()) return listed;
  std::string why;
  std::size_t next = 0;
  // Where sysfs alone says the first GPU API will be asked (a GPU that no
  // backend asked sees, and no vendor mask set), it starts now, beside the
  // read of the whole list, which then decides as before.
  std::optional<early_enumeration> early;
  std::string early_why;
  if (!vendor_mask_set() && !settled_without(listed, deferred, in, lazy_scan_early_gpus(), early_why, next) &&
      next == 0) {
    early.emplace(*deferred.front().entry);
    if (!early->started()) early.reset();
  }
  const physical_gpus view = lazy_scan_gpus();
  while (!deferred.empty()) {
    if (settled_without(listed, deferred, in, view, why, next)) break;
    const backend_entry& b = *deferred[next].entry;
    if (early && early->entry() == &b) {
      lines.push_back("backend " + std::string(deferred[next].id) + ": asked: " + why +
                      "; started beside the read of that list, as sysfs said: " + early_why);
      take(b, early->take());
      early.reset();
    } else {
      lines.push_back("backend " + std::string(deferred[next].id) + ": asked: " + why);
      ask(b);
    }
    deferred.erase(deferred.begin() + static_cast<std::ptrdiff_t>(next));
  }
  if (early) {  // sysfs's list and the whole one disagreed: started, not asked
    (void)early->take();
    lines.push_back("backend " + std::string(early->entry()->id()) + ": started beside the read of the machine's "
                    "GPU list (sysfs: " + early_why + "), then not needed by the whole list (" + view.source + ")");
  }
  for (const auto& d : deferred) {
    lines.push_back("backend " + std::string(d.id) + ": not asked: the decision is settled without it (the machine's "
                    "GPU list, from " + view.source + ", holds " + std::to_string(view.gpus.size()) +
                    " GPUs, each seen by a backend asked or hidden by a mask, and no record of it could put it "
                    "ahead); circuits() asks it");
    not_asked.emplace_back(d.id);
  }
  return listed;
}

}  // namespace detail
}  // namespace roster
