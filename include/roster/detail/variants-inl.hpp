#pragma once
// Private: timing, checking and choosing among a kernel's variants.

#include <roster/variants.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/text.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace roster {

namespace detail {

// The input every buffer parameter starts from: fixed, positive, varied.
inline double tune_input(std::size_t param, std::size_t i) noexcept {
  return 1.0 + static_cast<double>((i * 7 + param * 13) % 17) / 16.0;
}

// Host copies of a call's buffers in their element type, for a reference run.
template <class T>
expected<std::vector<std::vector<double>>> host_reference(host_kernel_fn fn, std::span<const kernel_param> sig,
                                                          std::span<const std::vector<double>> inputs,
                                                          std::span<const scalar_arg> scalars, std::size_t extent) {
  std::vector<std::vector<T>> host;
  for (const auto& in : inputs) host.emplace_back(in.begin(), in.end());
  std::vector<kernel_buffer> bufs;
  for (auto& h : host) bufs.push_back({h.data(), h.size(), element_of<T>()});
  kernel_args args{bufs, scalars, extent};
  fn(args, 0, extent);
  std::vector<std::vector<double>> out;
  std::size_t bi = 0;
  for (const auto& p : sig) {
    if (!p.is_buffer) continue;
    if (p.mode != access::read) out.emplace_back(host[bi].begin(), host[bi].end());
    ++bi;
  }
  return out;
}

// Releases a tuning run's buffers however it ends.
struct tune_buffers {
  device& d;
  std::vector<buffer> list;
  explicit tune_buffers(device& dev) : d(dev) {}
  ~tune_buffers() {
    (void)d.synchronize();
    for (const auto& b : list) (void)d.release(b);
  }
  tune_buffers(const tune_buffers&) = delete;
  tune_buffers& operator=(const tune_buffers&) = delete;
};

}  // namespace detail

ROSTER_INLINE kernel_choice choose_variant(std::span<const variant_timing> variants, std::string_view baseline,
                                           double min_gain) {
  kernel_choice c;
  c.baseline = std::string(baseline);
  c.variant = c.baseline;
  const variant_timing* base = nullptr;
  for (const auto& v : variants)
    if (v.variant == baseline) base = &v;
  if (base == nullptr || base->wrong) return c;
  c.baseline_ns = c.variant_ns = base->median_ns;
  c.spread = base->spread;
  for (const auto& v : variants) {
    if (&v == base || v.wrong) continue;
    const auto d = detail::decide({base->median_ns, base->spread}, {v.median_ns, v.spread}, min_gain);
    if (d.change && v.median_ns < c.variant_ns) {
      c.variant = v.variant;
      c.variant_ns = v.median_ns;
      c.spread = d.spread;
    }
  }
  return c;
}

ROSTER_INLINE expected<kernel_tuning> tune_kernel(device& d, std::string_view op, element_type type,
                                                  std::size_t size, const tune_options& o) {
  const std::string backend(d.adapter().backend);
  const std::string what =
      d.adapter().spec() + ": tune kernel '" + std::string(op) + "' over " + std::string(to_string(type));
  std::vector<const kernel_entry*> entries;
  for (const auto* e : kernels_of(op))
    if (e->backend == backend && e->type == type) entries.push_back(e);
  auto base = find_kernel(op, backend, type);
  if (!base) return std::move(base).error().prepend(what);
  if (size == 0 || o.reps == 0)
    return make_error(errc::invalid_argument, what + ": the size and the repetitions must be at least 1",
                      "pass a size of at least 1 element and reps of at least 1");
  const auto sig = (*base)->signature;

  // Buffers of `size` elements with fixed inputs; the scalars given or defaults.
  detail::tune_buffers bufs(d);
  std::vector<std::vector<double>> inputs;
  for (std::size_t i = 0; i < sig.size(); ++i) {
    if (!sig[i].is_buffer) continue;
    auto b = d.allocate(type, size);
    if (!b) return std::move(b).error().prepend(what);
    bufs.list.push_back(*b);
    std::vector<double> in(size);
    for (std::size_t k = 0; k < size; ++k) in[k] = detail::tune_input(i, k);
    inputs.push_back(std::move(in));
  }
  std::vector<scalar_arg> scalars = o.scalars;
  if (scalars.empty())
    for (const auto& p : sig)
      if (!p.is_buffer)
        scalars.push_back(p.scalar == scalar_type::f32   ? scalar_arg(0.5f)
                          : p.scalar == scalar_type::f64 ? scalar_arg(0.5)
                          : p.scalar == scalar_type::i32 ? scalar_arg(std::int32_t{1})
                                                         : scalar_arg(std::uint32_t{1}));
  auto upload_inputs = [&]() -> expected<void> {
    for (std::size_t i = 0; i < bufs.list.size(); ++i) {
      expected<void> ok;
      if (type == element_type::f64) {
        ok = d.upload(bufs.list[i], std::span<const double>(inputs[i]));
      } else {
        std::vector<float> f(inputs[i].begin(), inputs[i].end());
        ok = d.upload(bufs.list[i], std::span<const float>(f));
      }
      if (!ok) return ok;
    }
    return {};
  };
  auto outputs = [&]() -> expected<std::vector<std::vector<double>>> {
    std::vector<std::vector<double>> out;
    std::size_t bi = 0;
    for (const auto& p : sig) {
      if (!p.is_buffer) continue;
      const buffer& b = bufs.list[bi++];
      if (p.mode == access::read) continue;
      std::vector<double> got(b.size);
      if (type == element_type::f64) {
        if (auto ok = d.download(b, std::span<double>(got)); !ok) return std::move(ok).error();
      } else {
        std::vector<float> f(b.size);
        if (auto ok = d.download(b, std::span<float>(f)); !ok) return std::move(ok).error();
        std::copy(f.begin(), f.end(), got.begin());
      }
      out.push_back(std::move(got));
    }
    return out;
  };

  std::vector<program> programs(entries.size());
  std::size_t base_at = 0;
  for (std::size_t v = 0; v < entries.size(); ++v) {
    if (entries[v] == *base) base_at = v;
    programs[v].call(op, bufs.list, scalars, call_options{o.extent, entries[v]->variant});
  }
  auto extent = check_call(*programs[base_at].steps().front().call);
  if (!extent) return std::move(extent).error().prepend(what);

  // The reference: the caller's host function, else the default variant's result.
  std::vector<std::vector<double>> want;
  if (o.reference != nullptr) {
    std::vector<scalar_arg> conv(scalars.size());
    convert_scalars(**base, *programs[base_at].steps().front().call, conv);
    auto r = type == element_type::f64
                 ? detail::host_reference<double>(o.reference, sig, inputs, conv, *extent)
                 : detail::host_reference<float>(o.reference, sig, inputs, conv, *extent);
    if (!r) return std::move(r).error();
    want = std::move(*r);
  }

  kernel_tuning out;
  out.variants.resize(entries.size());
  const double tol = type == element_type::f64 ? 1e-12 : 1e-5;
  // One run of a variant from the inputs; its outputs. Also its warm-up.
  auto checked_run = [&](std::size_t v) -> expected<std::vector<std::vector<double>>> {
    if (auto ok = upload_inputs(); !ok) return std::move(ok).error();
    if (auto ok = d.dispatch(programs[v]); !ok) return std::move(ok).error();
    if (auto ok = d.synchronize(); !ok) return std::move(ok).error();
    return outputs();
  };
  for (std::size_t v = 0; v < entries.size(); ++v) {
    out.variants[v].variant = std::string(entries[v]->variant);
    out.variants[v].is_default = v == base_at;
  }
  if (o.reference == nullptr) {
    auto got = checked_run(base_at);
    if (!got) return std::move(got).error().prepend(what);
    want = std::move(*got);
  }
  // Each variant against the reference (the default too, when the caller gave one).
  for (std::size_t v = 0; v < entries.size(); ++v) {
    auto& t = out.variants[v];
    if (v == base_at && o.reference == nullptr) continue;
    auto got = checked_run(v);
    if (!got) return std::move(got).error().prepend(what);
    for (std::size_t b = 0; b < got->size() && !t.wrong; ++b)
      for (std::size_t i = 0; i < (*got)[b].size(); ++i) {
        const double g = (*got)[b][i], w = want[b][i];
        if (std::fabs(g - w) <= tol * std::max(std::fabs(w), 1.0)) continue;
        t.wrong = error(errc::device_fault,
                        what + ": variant '" + t.variant + "' is wrong: output " + std::to_string(b) + " element " +
                            std::to_string(i) + " is " + detail::fixed(g, 9) + ", the reference " +
                            (o.reference ? std::string("") : "(variant '" + std::string((*base)->variant) + "') ") +
                            "gives " + detail::fixed(w, 9) + "; it is never chosen",
                        "fix the variant's kernel (its tests should compare it with the default), or unregister it");
        break;
      }
    if (t.wrong) detail::trace("tuning: " + t.wrong->message());
  }
  if (out.variants[base_at].wrong)
    return *out.variants[base_at].wrong;  // nothing to compare with: no choice

  // Timed runs, the variants interleaved so a drift of the machine hits all.
  if (auto ok = upload_inputs(); !ok) return std::move(ok).error().prepend(what);
  for (std::uint32_t r = 0; r < o.reps; ++r)
    for (std::size_t v = 0; v < entries.size(); ++v) {
      if (out.variants[v].wrong) continue;
      auto t = d.timed_dispatch(programs[v]);
      if (!t) return std::move(t).error().prepend(what);
      out.variants[v].ns.push_back(static_cast<double>(std::max<std::int64_t>(t->count(), 1)));
    }
  for (auto& t : out.variants) {
    if (t.wrong) continue;
    const auto s = detail::summarize(t.ns);
    t.median_ns = s.median;
    t.spread = s.spread;
  }
  out.choice = choose_variant(out.variants, (*base)->variant, o.min_gain);
  out.choice.op = std::string(op);
  out.choice.type = type;
  out.choice.size_class = size_class(*extent);
  detail::trace("tuning: " + what + " size class 2^" + std::to_string(out.choice.size_class) + ": variant '" +
                out.choice.variant + "' (" + detail::fixed(out.choice.variant_ns / 1e3) + " us against the default's " +
                detail::fixed(out.choice.baseline_ns / 1e3) + " us)");
  return out;
}

ROSTER_INLINE expected<void> record_kernel_choices(const adapter_info& a, std::span<const kernel_choice> choices,
                                                   const std::string& path) {
  tuning_record rec;
  rec.backend = a.backend;
  rec.device = tuning_device_key(a);
  rec.driver_version = a.driver_version;
  rec.spec = a.spec();
  rec.name = a.name;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  rec.measured_at = stamp;
  rec.kernels.assign(choices.begin(), choices.end());
  auto ok = save_tuning(path, std::span<const tuning_record>(&rec, 1));
  reload_tuning();
  return ok;
}

}  // namespace roster
