#pragma once
// Private: enumeration, merging into circuits, ranking, roles, fallback,
// rank binding and the trace.

#include <roster/circuits.hpp>
#include <roster/device.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/text.hpp>
#include <roster/detail/cpu_affinity.hpp>
#include <roster/detail/gpu_list.hpp>
#include <roster/detail/json.hpp>
#include <roster/detail/occupancy.hpp>
#include <roster/detail/requirement.hpp>
#include <roster/detail/vendor_masks.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

namespace roster {
namespace detail {

// One scan's result: immutable once published, never freed, so spans and
// circuit pointers handed out stay valid after a rescan.
struct circuits_snapshot {
  std::uint64_t generation = 0;
  std::optional<roster::error> failure;  // a malformed selector
  std::vector<circuit> circuits;
  std::vector<enumeration_failure> failures;
  const circuits_snapshot* retired_next = nullptr;
};

struct circuits_state {
  std::mutex scan_mutex;  // serialises scans
  std::atomic<const circuits_snapshot*> current{nullptr};
  std::mutex mutex;  // guards trace and provider
  std::vector<std::string> trace;
  score_provider provider;
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

inline std::string describe(const adapter_info& a) {
  std::string out = a.spec() + " (" + (a.name.empty() ? std::string("unnamed") : a.name) + ", " +
                    std::string(to_string(a.type));
  if (a.has_uuid()) out += ", " + a.uuid_string();
  if (!a.pci_address.empty()) out += ", pci " + a.pci_address;
  return out + ")";
}

ROSTER_INLINE std::string describe(const circuit& c) {
  return "circuit " + std::to_string(c.index) + " " + describe(c.adapter);
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

inline const circuits_snapshot* scan(std::uint64_t generation) {
  auto snap = std::make_unique<circuits_snapshot>();
  snap->generation = generation;
  std::vector<std::string> lines;
  for (const auto& e : refused_plugins()) lines.push_back("plugin refused: " + std::string(e.what()));
  auto sel = selector_from_env();
  if (!sel) {
    lines.push_back("selector: " + sel.error().message());
    snap->failure = sel.error();
    add_trace(std::move(lines), true);
    return snap.release();
  }
  auto req = requirement_from_env();
  if (!req) {
    lines.push_back("requirement: " + req.error().message());
    snap->failure = req.error();
    add_trace(std::move(lines), true);
    return snap.release();
  }
  if (*req) lines.push_back("requirement: ROSTER_REQUIRE='" + (*req)->text + "' (strict: no host CPU fallback)");
  if (!sel->empty()) {
    std::string terms;
    for (const auto& t : sel->terms) terms += (terms.empty() ? "'" : ", '") + t.text + "'";
    lines.push_back("selector: " + terms);
  }
  score_provider provider;
  {
    auto& s = the_circuits_state();
    std::lock_guard lock(s.mutex);
    provider = s.provider;
  }

  // Every backend's adapters first: the vendor masks are resolved against all of them.
  std::vector<std::pair<adapter_info, int>> listed;
  backends_in_use pin;
  for (const auto& b : registered_backends()) {
    if (auto conflict = backend_conflict(b.id()))  // acquire refuses this id
      lines.push_back("backend " + std::string(b.id()) + ": conflict: " + conflict->message());
    auto list = enumerate_adapters(*b.registration);
    if (!list) {
      lines.push_back("backend " + std::string(b.id()) + ": dropped, its enumerator failed: " +
                      std::string(list.error().what()));
      snap->failures.push_back({std::string(b.id()), list.error()});
      continue;
    }
    if (list->empty()) lines.push_back("backend " + std::string(b.id()) + ": no adapters");
    for (auto& a : *list) {
      if (a.backend.empty()) a.backend = std::string(b.id());
      listed.emplace_back(std::move(a), b.rank);
    }
  }
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
    if (*req) {
      if (auto why = (*req)->shortfall(a); !why.empty()) {
        lines.push_back("dropped " + describe(a) + ": " + why);
        continue;
      }
    }
    auto v = sel->judge(a);
    lines.push_back((v.kept ? "kept " : "dropped ") + describe(a) + ": " + v.reason);
    if (!v.kept) continue;
    kept.push_back(candidate{std::move(a), v.order, rank, {}});
    kept.back().pci = normalize_pci(kept.back().adapter.pci_address);
  }
  // Backends come in rank order; the selector's order comes first.
  std::stable_sort(kept.begin(), kept.end(),
                   [](const candidate& x, const candidate& y) { return x.order < y.order; });

  std::vector<group> groups;
  for (const auto& c : kept) {
    group* home = nullptr;
    std::string why;
    for (auto& g : groups) {
      why = merge_reason(c, g);
      if (!why.empty()) {
        home = &g;
        break;
      }
    }
    if (home == nullptr) {
      groups.emplace_back();
      home = &groups.back();
      home->cpu = c.adapter.type == device_type::cpu;
    } else {
      lines.push_back("merged " + c.adapter.spec() + " into the device of " + home->members.front()->adapter.spec() +
                      ": " + why);
    }
    home->members.push_back(&c);
    if (home->uuid_holder == nullptr && c.adapter.has_uuid()) home->uuid_holder = &c.adapter;
    if (home->pci.empty()) home->pci = c.pci;
  }

  struct ranked {
    circuit c;
    std::size_t order;
    int rank;
    std::string pci;
    std::size_t busy = 0;  // other processes on the device
  };
  std::vector<ranked> out;
  for (const auto& g : groups) {
    ranked r;
    r.c.adapter = g.members.front()->adapter;
    for (std::size_t i = 1; i < g.members.size(); ++i) r.c.alternates.push_back(g.members[i]->adapter);
    r.order = g.members.front()->order;
    r.rank = g.members.front()->rank;
    r.pci = g.pci;
    for (const auto* m : g.members) {
      if (m->adapter.type == device_type::cpu) break;
      try {
        r.c.occupancy = read_occupancy(m->adapter);
      } catch (...) {
        lines.push_back("occupancy of " + m->adapter.spec() + " could not be read; taken as idle");
      }
      if (r.c.occupancy) break;
    }
    if (r.c.occupancy) {
      if (auto why = occupancy_refusal(*r.c.occupancy); !why.empty()) {
        lines.push_back("dropped the device of " + r.c.adapter.spec() + " [" + r.c.identity() + "]: " + why);
        continue;
      }
      r.busy = other_processes(*r.c.occupancy);
    }
    if (provider) {
      for (const auto* m : g.members) {
        try {
          if (auto s = provider(m->adapter)) {
            r.c.score = *s;
            break;
          }
        } catch (...) {
          lines.push_back("score provider threw for " + m->adapter.spec() + "; unscored");
        }
      }
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const ranked& x, const ranked& y) {
    if (x.order != y.order) return x.order < y.order;
    if (x.c.type() != y.c.type()) return x.c.type() < y.c.type();
    if (x.c.score.has_value() != y.c.score.has_value()) return x.c.score.has_value();
    if (x.c.score && *x.c.score != *y.c.score) return *x.c.score > *y.c.score;
    if ((x.busy == 0) != (y.busy == 0)) return x.busy == 0;
    if (x.pci.empty() != y.pci.empty()) return !x.pci.empty();
    if (x.pci != y.pci) return x.pci < y.pci;
    if (x.rank != y.rank) return x.rank < y.rank;
    if (x.c.adapter.backend != y.c.adapter.backend) return x.c.adapter.backend < y.c.adapter.backend;
    return x.c.adapter.ordinal < y.c.adapter.ordinal;
  });
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].c.index = i;
    std::string line = describe(out[i].c) + " [" + out[i].c.identity() + "]";
    if (out[i].c.score) line += ", score " + std::to_string(*out[i].c.score);
    if (const auto& o = out[i].c.occupancy) {
      line += ", " + std::to_string(o->memory_free >> 20) + " of " + std::to_string(o->memory_total >> 20) +
              " MiB free, compute mode " + std::string(to_string(o->mode)) + ", " +
              std::to_string(out[i].busy) + " other processes";
      if (o->mig_enabled) line += ", MIG on (" + std::to_string(o->mig_uuids.size()) + " instances)";
    }
    if (!out[i].c.alternates.empty()) {
      line += ", alternates:";
      for (const auto& a : out[i].c.alternates) line += " " + a.spec();
    }
    lines.push_back(line);
    snap->circuits.push_back(std::move(out[i].c));
  }
  if (snap->circuits.empty()) lines.push_back("no circuits: no adapter was kept");
  add_trace(std::move(lines), true);
  return snap.release();
}

inline const circuits_snapshot* current_circuits() {
  auto& s = the_circuits_state();
  const std::uint64_t generation = scan_generation().load(std::memory_order_acquire);
  const circuits_snapshot* snap = s.current.load(std::memory_order_acquire);
  if (snap != nullptr && snap->generation == generation) [[likely]]
    return snap;
  std::lock_guard lock(s.scan_mutex);
  snap = s.current.load(std::memory_order_acquire);
  if (snap != nullptr && snap->generation == generation) return snap;
  const circuits_snapshot* fresh = scan(generation);
  const_cast<circuits_snapshot*>(fresh)->retired_next = snap;
  s.current.store(fresh, std::memory_order_release);
  return fresh;
}

inline device* open_for(const circuit* c, std::string_view role) {
  if (c == nullptr) return nullptr;
  auto d = c->open();
  if (d) {
    add_trace_line(std::string(role) + ": chose " + (*d)->adapter().spec() + " of " + describe(*c));
    return *d;
  }
  add_trace_line(std::string(role) + ": " + describe(*c) + " does not open: " + std::string(d.error().what()));
  return nullptr;
}

// The last links of the fallback chain: the host CPU's circuit, then the spec "cpu".
inline device* open_host_cpu(std::string_view role, std::span<const circuit> list, const circuit* tried_a,
                             const circuit* tried_b) {
  for (const auto& c : list) {
    if (c.type() != device_type::cpu || &c == tried_a || &c == tried_b) continue;
    if (auto* d = open_for(&c, role)) return d;
  }
  if (auto req = requirement_from_env(); !req || *req) {
    add_trace_line(std::string(role) + ": no fallback to the host CPU by spec (ROSTER_REQUIRE is set)");
    return nullptr;
  }
  if (find_backend("cpu") != nullptr) {
    auto d = get_device("cpu");
    if (d) {
      add_trace_line(std::string(role) + ": chose cpu:0 (the host CPU, by spec)");
      return *d;
    }
    add_trace_line(std::string(role) + ": cpu:0 does not open: " + std::string(d.error().what()));
  }
  add_trace_line(std::string(role) + ": nothing opens");
  return nullptr;
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

ROSTER_INLINE expected<device*> circuit::open() const noexcept {
  auto d = get_device(adapter.spec());
  if (d) return d;
  for (const auto& a : alternates) {
    auto alt = get_device(a.spec());
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

ROSTER_INLINE const circuit* primary() noexcept {
  auto list = circuits();
  if (!list || list->empty()) return nullptr;
  return &list->front();
}

ROSTER_INLINE const circuit* auxiliary() noexcept {
  auto list = circuits();
  if (!list || list->size() < 2) return nullptr;
  for (std::size_t i = 1; i < list->size(); ++i)
    if ((*list)[i].type() == device_type::integrated_gpu) return &(*list)[i];
  return &(*list)[1];
}

ROSTER_INLINE device* try_primary_device() noexcept {
  try {
    auto list = circuits();
    std::span<const circuit> cs = list ? *list : std::span<const circuit>{};
    const circuit* p = cs.empty() ? nullptr : &cs.front();
    if (auto* d = detail::open_for(p, "primary")) return d;
    return detail::open_host_cpu("primary", cs, p, nullptr);
  } catch (...) {
    return nullptr;
  }
}

ROSTER_INLINE device* try_auxiliary_device() noexcept {
  try {
    auto list = circuits();
    std::span<const circuit> cs = list ? *list : std::span<const circuit>{};
    const circuit* a = auxiliary();
    if (a == nullptr) detail::add_trace_line("auxiliary: none (fewer than two circuits)");
    if (auto* d = detail::open_for(a, "auxiliary")) return d;
    const circuit* p = cs.empty() ? nullptr : &cs.front();
    if (auto* d = detail::open_for(p, "auxiliary, falling back to the primary")) return d;
    return detail::open_host_cpu("auxiliary, falling back to the host CPU", cs, a, p);
  } catch (...) {
    return nullptr;
  }
}

ROSTER_INLINE expected<device*> default_device() noexcept {
  try {
    if (const auto v = detail::env_nonblank(detail::env_device)) {
      auto d = get_device(*v);
      if (!d) return std::move(d).error().prepend("ROSTER_DEVICE");
      return d;
    }
    auto list = circuits();
    if (!list) return std::move(list).error();
    if (auto req = detail::requirement_from_env(); list->empty() && req && *req)
      return detail::requirement_unmet(**req, "default device");
    if (list->empty())
      return make_error(errc::not_found, "default device: no circuit (no adapter was kept)",
                        "link a backend (the CPU backend opens everywhere), relax ROSTER_DEVICE_SELECTOR, or set "
                        "ROSTER_DEVICE to a spec; ROSTER_TRACE=1 shows why each adapter was dropped");
    return list->front().open();
  } catch (...) {
    return make_error(errc::out_of_memory, "default device: out of memory",
                      "check the memory available to the process");
  }
}

ROSTER_INLINE void set_score_provider(score_provider provider) {
  auto& s = detail::the_circuits_state();
  std::lock_guard lock(s.mutex);
  s.provider = std::move(provider);
}

ROSTER_INLINE std::vector<std::string> trace_lines() {
  (void)detail::current_circuits();
  auto& s = detail::the_circuits_state();
  std::lock_guard lock(s.mutex);
  return s.trace;
}

}  // namespace roster
