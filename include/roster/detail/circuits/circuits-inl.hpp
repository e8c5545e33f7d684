#pragma once
// Private: enumeration, merging into circuits, their order and the trace.

#include <roster/circuits.hpp>
#include <roster/device_cache.hpp>
#include <roster/plugins.hpp>
#include <roster/tuning/store.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/open/gpu_list.hpp>
#include <roster/detail/circuits/lazy_scan.hpp>
#include <roster/detail/circuits/listing.hpp>
#include <roster/detail/circuits/occupancy_reader.hpp>
#include <roster/detail/open/requirement.hpp>
#include <roster/detail/base/text.hpp>
#include <roster/detail/open/vendor_masks.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace roster {
namespace detail {

// One scan's result: immutable once published, never freed, so spans and
// circuit pointers handed out stay valid after a rescan.
struct circuits_snapshot {
  // The scan generation it answers for: a rescan that finds the same machine
  // moves it on instead of publishing a copy.
  std::atomic<std::uint64_t> generation{0};
  std::optional<roster::error> failure;  // a malformed selector, requirement or ROSTER_TUNING
  std::vector<circuit> circuits;
  std::vector<enumeration_failure> failures;
  // Backends a decision's scan did not ask (their APIs not started): empty
  // for a whole scan, the only kind circuits() hands out.
  std::vector<std::string> not_asked;
  const circuits_snapshot* retired_next = nullptr;
};

struct circuits_state {
  std::mutex scan_mutex;  // serialises scans
  std::atomic<const circuits_snapshot*> current{nullptr};
  std::mutex mutex;  // guards the trace
  std::vector<std::string> trace;
  // The decision's scan when it left backends out; last, so that the members
  // above keep their places for code built before it.
  std::atomic<const circuits_snapshot*> partial{nullptr};
};

ROSTER_API ROSTER_INLINE circuits_state& the_circuits_state() noexcept {
  static circuits_state s;  // function-local: no global constructor
  return s;
}

// Appends lines to the trace (replacing it when `fresh`), printing them when ROSTER_TRACE is set.
inline void add_trace(std::vector<std::string> lines, bool fresh) {
  for (const auto& l : lines) trace(l);
  auto& s = the_circuits_state();
  std::lock_guard lock(s.mutex);
  if (fresh) s.trace.clear();
  for (auto& l : lines) s.trace.push_back(std::move(l));
}

ROSTER_INLINE void add_trace_line(std::string line) noexcept {
  try {
    std::vector<std::string> v;
    v.push_back(std::move(line));
    add_trace(std::move(v), false);
  } catch (...) {
  }
}

ROSTER_INLINE std::string describe(const adapter_info& a) {
  std::string out = a.spec() + " (" + (a.name.empty() ? std::string("unnamed") : a.name) + ", " +
                    std::string(to_string(a.type)) + (a.software ? ", software" : "");
  if (a.has_uuid()) out += ", " + a.uuid_string();
  if (!a.pci_address.empty()) out += ", pci " + a.pci_address;
  return out + ")";
}

ROSTER_INLINE std::string describe(const circuit& c) {
  return "circuit " + std::to_string(c.index) + " " + describe(c.adapter);
}

ROSTER_INLINE void order_adapters(std::vector<adapter_info>& adapters, std::span<const tuning_record> records,
                                  op_set ops, std::optional<element_type> type, std::string* because,
                                  const selector* sel) {
  if (adapters.size() < 2) {
    if (because) *because = "the only adapter of this device";
    return;
  }
  // The selector's term first; then, without a record that decides, a native
  // adapter before a software one (lavapipe, PoCL on the CPU); otherwise the
  // given order stands. A record moves an adapter ahead inside its term only.
  std::vector<std::size_t> term(adapters.size(), 0);
  if (sel != nullptr)
    for (std::size_t i = 0; i < adapters.size(); ++i) term[i] = sel->judge(adapters[i]).order;
  std::vector<std::size_t> at(adapters.size());
  for (std::size_t i = 0; i < at.size(); ++i) at[i] = i;
  // The standing preference (a record that leads its circuit) first in its
  // term: the others must beat it beyond the noise to pass it.
  std::vector<bool> leads(adapters.size(), false);
  for (std::size_t i = 0; i < adapters.size(); ++i)
    if (const tuning_record* r = record_of(records, adapters[i])) leads[i] = r->leads;
  std::stable_sort(at.begin(), at.end(), [&](std::size_t x, std::size_t y) {
    if (term[x] != term[y]) return term[x] < term[y];
    if (leads[x] != leads[y]) return bool(leads[x]);
    return !adapters[x].software && adapters[y].software;
  });
  std::vector<adapter_info> out;
  std::string why;
  while (!at.empty()) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < at.size() && term[at[i]] == term[at[0]]; ++i)
      if (measured(record_of(records, adapters[at[best]]), record_of(records, adapters[at[i]]), ops, type) > 0)
        best = i;
    if (out.empty()) {
      const adapter_info& lead = adapters[at[best]];
      const std::size_t other = at[best == 0 ? 1 : 0];
      const adapter_info& next = adapters[other];
      const tuning_record* a = record_of(records, lead);
      const tuning_record* b = record_of(records, next);
      if (term[other] != term[at[best]])
        why = lead.spec() + " by selector term: ROSTER_DEVICE_SELECTOR names it before " + next.spec();
      else if (best != 0 || measured(b, a, ops, type) > 0)
        why = lead.spec() + " by record: " + triad_text(a) + " against " + next.spec() + "'s " + triad_text(b) +
              ", beyond the noise";
      else if (a != nullptr && a->leads && b != nullptr)
        why = lead.spec() + " by standing record: it led when measured, and " + next.spec() + "'s " +
              triad_text(b) + " does not beat its " + triad_text(a) + " beyond the noise";
      else if (a != nullptr && b != nullptr)
        why = lead.spec() + " by backend rank: the records of " + lead.spec() + " and " + next.spec() +
              " differ by no more than the noise (" + triad_text(a) + ", " + triad_text(b) + ")";
      else if (!lead.software && next.software)
        why = lead.spec() + " before the software " + next.spec() + ": nothing measured (" + triad_text(a) +
              ", " + next.spec() + " " + triad_text(b) + ")";
      else
        why = lead.spec() + " by backend rank (" + (a == nullptr || b == nullptr ? std::string("nothing to compare")
                                                                                  : std::string("no record decides")) +
              ")";
    }
    out.push_back(std::move(adapters[at[best]]));
    at.erase(at.begin() + static_cast<std::ptrdiff_t>(best));
  }
  adapters = std::move(out);
  if (because) *because = std::move(why);
}

struct candidate {
  adapter_info adapter;
  std::size_t order = 0;  // selector term
  int rank = unranked;
  std::string pci;        // normalized
};

struct group {
  std::vector<const candidate*> members;
  const adapter_info* uuid_holder = nullptr;
  std::string pci;
  bool cpu = false;
};

// Says why candidate c belongs to group g, or returns empty when it does not.
inline std::string merge_reason(const candidate& c, const group& g) {
  const bool c_cpu = c.adapter.type == device_type::cpu;
  if (c_cpu || g.cpu) return c_cpu && g.cpu ? "both are the host CPU (type cpu)" : "";
  if (c.adapter.has_uuid() && g.uuid_holder != nullptr)
    return c.adapter.uuid == g.uuid_holder->uuid ? "same UUID " + c.adapter.uuid_string() : "";
  if (!c.pci.empty() && !g.pci.empty() && c.pci == g.pci) return "same PCI address " + c.pci + " (UUID unknown)";
  return "";
}

inline expected<scan_inputs> read_inputs(std::vector<std::string>& lines) {
  scan_inputs in;
  auto sel = selector_from_env();
  if (!sel) return std::move(sel).error();
  in.sel = std::move(*sel);
  auto req = parsed_requirement_env();
  if (!req) return std::move(req).error();
  in.req = std::move(*req);
  auto mode = tuning_mode_from_env();
  if (!mode) return std::move(mode).error();
  if (*mode != tuning_mode::off) in.records = current_tuning();
  if (in.req) lines.push_back("requirement: ROSTER_REQUIRE='" + printable(in.req->text) + "' (strict: no host CPU fallback)");
  if (!in.sel.empty()) {
    std::string terms;
    for (const auto& t : in.sel.terms) terms += (terms.empty() ? "'" : ", '") + t.text + "'";
    lines.push_back("selector: " + terms);
  }
  lines.push_back(*mode == tuning_mode::off ? std::string("measurements: ROSTER_TUNING=off, records not read")
                                            : "measurements: " + std::to_string(in.records.size()) + " records");
  return in;
}

ROSTER_API ROSTER_INLINE lazy_scan_hook& the_lazy_scan_hook() noexcept {
  static lazy_scan_hook h;  // function-local: no global constructor
  return h;
}

ROSTER_INLINE void set_lazy_scan_for_testing(std::optional<lazy_scan_testing> t) {
  auto& h = the_lazy_scan_hook();
  std::lock_guard lock(h.mutex);
  h.replaced = std::move(t);
}

// The adapters the vendor masks, the requirement and the selector keep.
inline std::vector<candidate> keep_adapters(std::vector<std::pair<adapter_info, int>>& listed,
                                            const scan_inputs& in, std::vector<std::string>& lines) {
  std::vector<adapter_info> all;
  all.reserve(listed.size());
  for (const auto& l : listed) all.push_back(l.first);
  const auto masks = vendor_masks::resolve(
      [](const char* name) -> const char* {
        auto v = env_text(name);
        return v ? v->data() : nullptr;
      },
      all, &machine_gpus);
  for (const auto& m : masks.masks())
    lines.push_back("vendor mask: " + m.variable + "='" + m.value + "' (" + std::to_string(m.entries.size()) +
                    " entries)");
  for (const auto& note : masks.notes()) lines.push_back("vendor mask: " + note);
  std::vector<candidate> kept;
  for (auto& [a, rank] : listed) {
    if (auto mv = masks.judge(a); mv && !mv->kept) {
      lines.push_back("dropped " + describe(a) + ": " + mv->reason);
      continue;
    }
    if (in.req)
      if (auto why = in.req->shortfall(a); !why.empty()) {
        lines.push_back("dropped " + describe(a) + ": " + why);
        continue;
      }
    auto v = in.sel.judge(a);
    lines.push_back((v.kept ? "kept " : "dropped ") + describe(a) + ": " + v.reason);
    if (!v.kept) continue;
    kept.push_back(candidate{std::move(a), v.order, rank, {}});
    kept.back().pci = normalize_pci(kept.back().adapter.pci_address);
  }
  // Backends come in rank order; the selector's order comes first.
  std::stable_sort(kept.begin(), kept.end(), [](const candidate& x, const candidate& y) { return x.order < y.order; });
  return kept;
}

// Each candidate joins the first group (in the order groups were made) that
// merge_reason() accepts, else makes a new one. The groups that could accept
// a candidate are looked up by its UUID and PCI address instead of asked one
// by one, so a backend of many adapters costs n log n, not n squared.
inline std::vector<group> merge(const std::vector<candidate>& kept, std::vector<std::string>& lines) {
  std::vector<group> groups;
  groups.reserve(kept.size());
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t cpu_group = none;
  std::map<std::array<std::uint8_t, 16>, std::size_t> by_uuid;  // first group holding the UUID
  std::map<std::string, std::size_t> by_pci;                     // first group of the address
  std::map<std::string, std::set<std::size_t>> by_pci_no_uuid;   // groups of the address holding no UUID
  for (const auto& c : kept) {
    std::size_t at = none;
    if (c.adapter.type == device_type::cpu) {
      at = cpu_group;
    } else {
      std::size_t by_id = none, by_place = none;
      if (c.adapter.has_uuid()) {  // a group holding a UUID takes it by UUID alone
        if (auto u = by_uuid.find(c.adapter.uuid); u != by_uuid.end()) by_id = u->second;
        if (!c.pci.empty())
          if (auto p = by_pci_no_uuid.find(c.pci); p != by_pci_no_uuid.end() && !p->second.empty())
            by_place = *p->second.begin();
      } else if (!c.pci.empty()) {
        if (auto p = by_pci.find(c.pci); p != by_pci.end()) by_place = p->second;
      }
      at = std::min(by_id, by_place);
      if (at != none && groups[at].cpu) at = none;
    }
    if (at == none) {
      at = groups.size();
      groups.emplace_back();
      groups.back().cpu = c.adapter.type == device_type::cpu;
      if (groups.back().cpu && cpu_group == none) cpu_group = at;
    } else {
      lines.push_back("merged " + c.adapter.spec() + " into the device of " +
                      groups[at].members.front()->adapter.spec() + ": " + merge_reason(c, groups[at]));
    }
    group& home = groups[at];
    home.members.push_back(&c);
    if (home.cpu) continue;
    if (home.uuid_holder == nullptr && c.adapter.has_uuid()) {
      home.uuid_holder = &c.adapter;
      auto [u, fresh] = by_uuid.emplace(c.adapter.uuid, at);
      if (!fresh) u->second = std::min(u->second, at);
      if (!home.pci.empty()) by_pci_no_uuid[home.pci].erase(at);
    }
    if (home.pci.empty() && !c.pci.empty()) {
      home.pci = c.pci;
      auto [p, fresh] = by_pci.emplace(home.pci, at);
      if (!fresh) p->second = std::min(p->second, at);
      if (home.uuid_holder == nullptr) by_pci_no_uuid[home.pci].insert(at);
    }
  }
  return groups;
}

struct ranked {
  circuit c;
  std::size_t order;
  int rank;
  std::string pci;
  std::size_t busy = 0;  // other processes on the device
  const tuning_record* record = nullptr;
};

// One circuit from a group: its adapters in preference order, its occupancy.
// Returns false when the device is left out (its compute mode refuses us).
inline bool make_circuit(const group& g, const scan_inputs& in, ranked& r, std::vector<std::string>& lines) {
  std::vector<adapter_info> members;
  for (const auto* m : g.members) members.push_back(m->adapter);
  order_adapters(members, in.records, {}, std::nullopt, &r.c.preferred_because, &in.sel);
  r.c.adapter = members.front();
  r.c.alternates.assign(members.begin() + 1, members.end());
  const candidate* lead = g.members.front();
  for (const auto* m : g.members)
    if (m->adapter.spec() == r.c.adapter.spec()) lead = m;
  r.order = lead->order;
  r.rank = lead->rank;
  r.pci = g.pci;
  r.record = record_of(in.records, r.c.adapter);
  if (r.record) r.c.score = r.record->triad_bandwidth();
  for (const auto& a : members) {
    if (a.type == device_type::cpu) break;
    try {
      r.c.occupancy = read_occupancy(a);
    } catch (...) {
      lines.push_back("occupancy of " + a.spec() + " could not be read; taken as idle");
    }
    if (r.c.occupancy) break;
  }
  if (r.c.occupancy) {
    if (auto why = occupancy_refusal(*r.c.occupancy); !why.empty()) {
      lines.push_back("dropped the device of " + r.c.adapter.spec() + " [" + r.c.identity() + "]: " + why);
      return false;
    }
    r.busy = other_processes(*r.c.occupancy);
  }
  return true;
}

// Orders circuits: selector term, type, idle before busy, PCI address, rank;
// then, within one selector term and type, a record moves a circuit ahead of
// those it measured faster than beyond the noise.
inline void order_circuits(std::vector<ranked>& out) {
  std::stable_sort(out.begin(), out.end(), [](const ranked& x, const ranked& y) {
    if (x.order != y.order) return x.order < y.order;
    if (x.c.type() != y.c.type()) return x.c.type() < y.c.type();
    if ((x.busy == 0) != (y.busy == 0)) return x.busy == 0;
    if (x.pci.empty() != y.pci.empty()) return !x.pci.empty();
    if (x.pci != y.pci) return x.pci < y.pci;
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.c.adapter.backend != y.c.adapter.backend) return x.c.adapter.backend < y.c.adapter.backend;
    return x.c.adapter.ordinal < y.c.adapter.ordinal;
  });
  for (auto& r : out) r.c.placed_because = "selector term, type, idle before busy, PCI address, backend rank";
  std::vector<ranked> result;
  result.reserve(out.size());
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = start + 1;
    while (end < out.size() && out[end].order == out[start].order && out[end].c.type() == out[start].c.type()) ++end;
    // Each pick: the first left, unless a later one measured faster beyond
    // the noise than the best so far. A circuit without a record never
    // measures faster, and the first left without one is never passed, so
    // only those with records are compared: n plus r squared for r records,
    // not n squared.
    std::vector<std::size_t> with_record;
    for (std::size_t i = start; i < end; ++i)
      if (out[i].record != nullptr) with_record.push_back(i);
    std::vector<bool> taken(end - start, false);
    for (std::size_t first = start; first < end;) {
      std::size_t best = first;
      if (out[first].record != nullptr)
        for (std::size_t i : with_record)
          if (i > first && !taken[i - start] && measured(out[best].record, out[i].record, {}, std::nullopt) > 0)
            best = i;
      if (best != first)
        out[best].c.placed_because = "ahead of " + out[first].c.adapter.spec() + " by record: " +
                                     triad_text(out[best].record) + " against " + triad_text(out[first].record);
      taken[best - start] = true;
      if (out[best].record != nullptr)
        with_record.erase(std::find(with_record.begin(), with_record.end(), best));
      result.push_back(std::move(out[best]));
      while (first < end && taken[first - start]) ++first;
    }
    start = end;
  }
  out = std::move(result);
}

inline std::string circuit_line(const ranked& r) {
  std::string line = describe(r.c) + " [" + r.c.identity() + "]";
  if (r.c.score) line += ", triad " + fixed(*r.c.score) + " GB/s by record";
  if (const auto& o = r.c.occupancy) {
    line += ", " + std::to_string(o->memory_free >> 20) + " of " + std::to_string(o->memory_total >> 20) +
            " MiB free, compute mode " + std::string(to_string(o->mode)) + ", " + std::to_string(r.busy) +
            " other processes";
    if (o->mig_enabled) line += ", MIG on (" + std::to_string(o->mig_uuids.size()) + " instances)";
  }
  if (!r.c.alternates.empty()) {
    line += ", alternates:";
    for (const auto& a : r.c.alternates) line += " " + a.spec();
    line += "; preferred: " + r.c.preferred_because;
  }
  return line;
}

inline const circuits_snapshot* scan(std::uint64_t generation, bool lazy = false) {
  auto snap = std::make_unique<circuits_snapshot>();
  snap->generation.store(generation, std::memory_order_relaxed);
  std::vector<std::string> lines;
  for (const auto& e : refused_plugins()) lines.push_back("plugin refused: " + std::string(e.what()));
  auto in = read_inputs(lines);
  if (!in) {
    lines.push_back(in.error().message());
    snap->failure = in.error();
    add_trace(std::move(lines), true);
    return snap.release();
  }
  backends_in_use pin;
  nvml_warmup nvml_start;  // NVML starts beside the enumeration; the circuits read occupancy through it
  std::vector<std::pair<std::string, error>> failed;
  auto listed = list_adapters(*in, failed, snap->not_asked, lines, lazy);
  for (auto& [id, e] : failed) snap->failures.push_back({std::move(id), std::move(e)});
  nvml_start.join();
  const auto kept = keep_adapters(listed, *in, lines);
  std::vector<ranked> out;
  for (const auto& g : merge(kept, lines)) {
    ranked r;
    if (make_circuit(g, *in, r, lines)) out.push_back(std::move(r));
  }
  order_circuits(out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].c.index = i;
    lines.push_back(circuit_line(out[i]));
    snap->circuits.push_back(std::move(out[i].c));
  }
  if (snap->circuits.empty()) lines.push_back("no circuits: no adapter was kept");
  add_trace(std::move(lines), true);
  return snap.release();
}

// Publishes a whole scan as the current snapshot (under the scan mutex).
inline const circuits_snapshot* publish_whole(circuits_state& s, const circuits_snapshot* snap,
                                              const circuits_snapshot* fresh, std::uint64_t generation) {
  // Spans of a published snapshot stay valid for the process, so one that
  // is replaced is kept (retired), never freed. A scan that found what the
  // current snapshot holds was never published: no reader can hold it, so
  // it is freed, and the current one answers for the new generation. Only a
  // rescan that changes something (an adapter came or went, a GPU's free
  // memory or processes moved) keeps one more snapshot alive.
  if (snap != nullptr && snap->circuits == fresh->circuits && snap->failures == fresh->failures &&
      snap->failure == fresh->failure) {
    delete fresh;
    const_cast<circuits_snapshot*>(snap)->generation.store(generation, std::memory_order_release);
    return snap;
  }
  const_cast<circuits_snapshot*>(fresh)->retired_next = snap;
  s.current.store(fresh, std::memory_order_release);
  return fresh;
}

inline bool answers(const circuits_snapshot* snap, std::uint64_t generation) noexcept {
  return snap != nullptr && snap->generation.load(std::memory_order_acquire) == generation;
}

// The whole scan: every backend the selector and the requirement leave is asked.
inline const circuits_snapshot* current_circuits() {
  auto& s = the_circuits_state();
  const std::uint64_t generation = scan_generation().load(std::memory_order_acquire);
  const circuits_snapshot* snap = s.current.load(std::memory_order_acquire);
  if (answers(snap, generation)) [[likely]]
    return snap;
  std::lock_guard lock(s.scan_mutex);
  snap = s.current.load(std::memory_order_acquire);
  if (answers(snap, generation)) return snap;
  return publish_whole(s, snap, scan(generation), generation);
}

// The decision's scan: the whole one when there is one for this generation,
// else a lazy one that starts only the APIs the decision needs (list_adapters).
// A lazy scan that left nothing out is published as the whole one.
inline const circuits_snapshot* decision_circuits() {
  auto& s = the_circuits_state();
  const std::uint64_t generation = scan_generation().load(std::memory_order_acquire);
  if (const auto* whole = s.current.load(std::memory_order_acquire); answers(whole, generation)) [[likely]]
    return whole;
  if (const auto* part = s.partial.load(std::memory_order_acquire); answers(part, generation)) return part;
  std::lock_guard lock(s.scan_mutex);
  const circuits_snapshot* whole = s.current.load(std::memory_order_acquire);
  if (answers(whole, generation)) return whole;
  const circuits_snapshot* part = s.partial.load(std::memory_order_acquire);
  if (answers(part, generation)) return part;
  const circuits_snapshot* fresh = scan(generation, true);
  if (fresh->not_asked.empty()) return publish_whole(s, whole, fresh, generation);
  const_cast<circuits_snapshot*>(fresh)->retired_next = part;  // kept, never freed, as above
  s.partial.store(fresh, std::memory_order_release);
  return fresh;
}

}  // namespace detail

ROSTER_INLINE std::string circuit::identity() const {
  if (adapter.has_uuid()) return adapter.uuid_string();
  for (const auto& a : alternates)
    if (a.has_uuid()) return a.uuid_string();
  if (!adapter.pci_address.empty()) return "pci " + normalize_pci(adapter.pci_address);
  for (const auto& a : alternates)
    if (!a.pci_address.empty()) return "pci " + normalize_pci(a.pci_address);
  if (type() == device_type::cpu) return "host CPU";
  return adapter.spec();
}

ROSTER_INLINE bool circuit::identified() const noexcept {
  if (adapter.has_uuid() || !adapter.pci_address.empty()) return true;
  for (const auto& a : alternates)
    if (a.has_uuid() || !a.pci_address.empty()) return true;
  return false;
}

ROSTER_INLINE expected<device*> circuit::open() const noexcept {
  auto d = detail::cached_device(device_spec{adapter.backend, adapter.ordinal});
  if (d) return d;
  for (const auto& a : alternates) {
    auto alt = detail::cached_device(device_spec{a.backend, a.ordinal});
    if (alt) return alt;
  }
  return d;
}

ROSTER_INLINE expected<std::span<const circuit>> circuits() noexcept {
  try {
    const auto* snap = detail::current_circuits();
    if (snap->failure) return *snap->failure;
    return std::span<const circuit>(snap->circuits);
  } catch (...) {
    return make_error(errc::out_of_memory, "circuits: out of memory while scanning adapters",
                      "check the memory available to the process, then call roster::rescan()");
  }
}

ROSTER_INLINE std::vector<enumeration_failure> enumeration_failures() {
  return detail::current_circuits()->failures;
}

ROSTER_INLINE std::vector<std::string> trace_lines() {
  (void)detail::current_circuits();
  auto& s = detail::the_circuits_state();
  std::lock_guard lock(s.mutex);
  return s.trace;
}

}  // namespace roster
