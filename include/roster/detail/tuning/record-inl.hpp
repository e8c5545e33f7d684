#pragma once
// Private: the tuning record lookups.

#include <roster/tuning/record.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace roster {

namespace detail {
inline void tuning_trace(const std::string& line) { trace("tuning: " + line); }
}  // namespace detail

// The records' own lookups, out of line: each optional and loop they
// instantiate would cost every file that includes roster (bench/compile_cost).
ROSTER_INLINE bool sync_timing::split_faster() const noexcept {
  return noise_rule::judge({native_ns, spread}, {split_ns, spread}).change;
}

ROSTER_INLINE std::optional<double> tuning_record::bandwidth(roster::op o, element_type t) const noexcept {
  if (const tuning_figure* f = figure(o, t)) return f->gbps;
  return std::nullopt;
}

ROSTER_INLINE const tuning_figure* tuning_record::figure(roster::op o, element_type t) const noexcept {
  for (const auto& f : figures)
    if (f.op == o && f.type == t) return &f;
  return nullptr;
}

ROSTER_INLINE std::optional<double> tuning_record::triad_bandwidth() const noexcept {
  if (auto d = bandwidth(op::triad, element_type::f64)) return d;
  return bandwidth(op::triad, element_type::f32);
}

ROSTER_INLINE std::optional<bool> tuning_record::split_faster_for(std::string_view shape) const noexcept {
  for (const auto& s : sync_shapes)
    if (s.shape == shape) return s.split_faster();
  return std::nullopt;
}

ROSTER_INLINE std::string tuning_device_key(const adapter_info& a) {
  if (a.has_uuid()) return a.uuid_string();
  return a.spec() + "/" + a.name;
}

ROSTER_INLINE std::string tuning_model_key(const adapter_info& a) { return "model:" + a.name; }

ROSTER_INLINE tuning_match find_tuning(std::span<const tuning_record> records, const adapter_info& a) noexcept {
  tuning_match m;
  try {
    // The device's own record first, then one for its model; the first of each wins.
    const std::string keys[2] = {tuning_device_key(a), tuning_model_key(a)};
    for (int k = 0; k < 2 && m.record == nullptr; ++k)
      for (const auto& r : records) {
        if (r.backend != a.backend || !detail::same_device_key(r.device, keys[k])) continue;
        if (r.driver_version != a.driver_version) {
          if (m.stale == nullptr) m.stale = &r;
          continue;
        }
        m.record = &r;
        m.by_model = k == 1;
        break;
      }
  } catch (...) {
  }
  return m;
}

ROSTER_INLINE int compare_records(const tuning_record& current, const tuning_record& candidate, op_set ops,
                                  element_type type) noexcept {
  // Time per byte of each measured op, summed: lower is faster.
  static constexpr op measured[] = {op::copy, op::mul, op::add, op::triad, op::dot};
  double cur = 0, cand = 0, spread = 0, bound_cur = 0, bound_cand = 0;
  int used = 0;
  auto add = [&](op o) {
    const tuning_figure* x = current.figure(o, type);
    const tuning_figure* y = candidate.figure(o, type);
    if (x == nullptr || y == nullptr || !(x->gbps > 0) || !(y->gbps > 0)) return false;
    cur += 1.0 / x->gbps;
    cand += 1.0 / y->gbps;
    spread = std::max({spread, x->spread, y->spread});
    bound_cur = std::max(bound_cur, x->bound);
    bound_cand = std::max(bound_cand, y->bound);
    ++used;
    return true;
  };
  for (op o : measured)
    if (ops.contains(o) && !add(o)) return 0;  // a figure missing: nothing to compare on
  if (used == 0 && !add(op::triad)) return 0;
  const auto e1 = static_cast<double>(current.elements), e2 = static_cast<double>(candidate.elements);
  const bool sizes_alike = e1 == 0 || e2 == 0 || std::max(e1, e2) <= 2 * std::min(e1, e2);  // 0: not said
  if (current.interleaved && candidate.interleaved && sizes_alike) {
    // Measured alike, in one window: the gain must clear the minimum by both
    // medians' confidence bounds.
    const double need = noise_rule::min_gain + bound_cur + bound_cand;
    if ((cur - cand) / cur > need) return 1;
    if ((cand - cur) / cand > need) return -1;
    return 0;
  }
  // Measured differently: with care, twice the minimum.
  const double minimum = current.interleaved == candidate.interleaved && sizes_alike ? noise_rule::min_gain
                                                                                     : 2 * noise_rule::min_gain;
  if (noise_rule::judge({cur, spread}, {cand, spread}, minimum).change) return 1;
  if (noise_rule::judge({cand, spread}, {cur, spread}, minimum).change) return -1;
  return 0;
}

namespace detail {
ROSTER_INLINE tuning_match find_tuning_traced(std::span<const tuning_record> records, const adapter_info& a) {
  auto m = find_tuning(records, a);
  if (m.record == nullptr && m.stale != nullptr)
    tuning_trace(a.spec() + ": record ignored: measured under driver '" + m.stale->driver_version + "', now '" +
                 a.driver_version + "'");
  return m;
}
}  // namespace detail

ROSTER_INLINE std::vector<std::string> split_shapes(const tuning_record* record, const adapter_info& a) {
  std::vector<std::string> out;
  if (record == nullptr || !a.native_grid_sync) return out;
  for (const auto& g : record->sync_shapes)
    if (g.split_faster()) out.push_back(g.shape);
  for (const auto& shape : out)
    detail::tuning_trace(a.spec() + ": grid-sync split for programs of shape '" + shape + "', by record");
  return out;
}

ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters, std::span<const tuning_record> records) {
  bool changed = false;
  for (device_type type : {device_type::discrete_gpu, device_type::integrated_gpu, device_type::virtual_gpu,
                           device_type::other, device_type::cpu}) {
    std::vector<std::size_t> at;
    std::vector<std::pair<adapter_info, std::optional<double>>> items;
    for (std::size_t i = 0; i < adapters.size(); ++i) {
      if (adapters[i].type != type) continue;
      at.push_back(i);
      auto m = detail::find_tuning_traced(records, adapters[i]);
      items.emplace_back(adapters[i], m.record ? m.record->triad_bandwidth() : std::nullopt);
    }
    if (items.size() < 2) continue;
    std::vector<std::size_t> order(items.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      const auto& a = items[x].second;
      const auto& b = items[y].second;
      if (a && b) return *a > *b;
      return a.has_value() && !b.has_value();
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (order[k] == k) continue;
      changed = true;
      // Say why an adapter moved ahead of the one that held its place.
      const auto& moved = items[order[k]];
      const auto& passed = items[k];
      if (moved.second && order[k] > k)
        detail::tuning_trace(moved.first.spec() + " ranks before " + passed.first.spec() + " by record: triad " +
                             detail::fixed(*moved.second) + " GB/s against " +
                             (passed.second ? detail::fixed(*passed.second) + " GB/s" : std::string("no record")));
    }
    for (std::size_t k = 0; k < order.size(); ++k) adapters[at[k]] = std::move(items[order[k]].first);
  }
  return changed;
}

}  // namespace roster
