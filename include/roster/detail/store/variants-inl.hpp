#pragma once
// Private: timing, checking and choosing among a kernel's variants.

#include <roster/variants.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>

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

// A tuning run: the variants of one op on one device, each a program over the
// same buffers, which every run starts from the same inputs.
struct tune_run {
  device& d;
  element_type type;
  std::string what;  // the context every error starts with
  std::span<const kernel_param> sig;
  tune_buffers bufs;
  std::vector<std::vector<double>> inputs;  // one for each buffer parameter
  std::vector<program> programs;            // one for each variant
  std::size_t base_at = 0;                  // the default variant's program
  tune_run(device& dev, element_type t, std::string context, std::span<const kernel_param> signature)
      : d(dev), type(t), what(std::move(context)), sig(signature), bufs(dev) {}
};

// Allocates a buffer of `size` elements for each buffer parameter, with its fixed input.
ROSTER_INLINE expected<void> allocate_tune_buffers(tune_run& run, std::size_t size) {
  for (std::size_t i = 0; i < run.sig.size(); ++i) {
    if (!run.sig[i].is_buffer) continue;
    auto b = run.d.allocate(run.type, size);
    if (!b) return std::move(b).error().prepend(run.what);
    run.bufs.list.push_back(*b);
    std::vector<double> in(size);
    for (std::size_t k = 0; k < size; ++k) in[k] = tune_input(i, k);
    run.inputs.push_back(std::move(in));
  }
  return {};
}

// Returns the scalars of a call whose caller gave none: 0.5 for a float, 1 for an integer.
ROSTER_INLINE std::vector<scalar_arg> default_tune_scalars(std::span<const kernel_param> sig) {
  std::vector<scalar_arg> scalars;
  for (const auto& p : sig)
    if (!p.is_buffer)
      scalars.push_back(p.scalar == scalar_type::f32   ? scalar_arg(0.5f)
                        : p.scalar == scalar_type::f64 ? scalar_arg(0.5)
                        : p.scalar == scalar_type::i32 ? scalar_arg(std::int32_t{1})
                                                       : scalar_arg(std::uint32_t{1}));
  return scalars;
}

// Builds one program for each variant in `entries`, a call of `op` over the
// run's buffers, and notes which one is the default `base`.
ROSTER_INLINE void build_tune_programs(tune_run& run, std::span<const kernel_entry* const> entries,
                                       const kernel_entry* base, std::string_view op,
                                       std::span<const scalar_arg> scalars, std::size_t extent) {
  run.programs.resize(entries.size());
  for (std::size_t v = 0; v < entries.size(); ++v) {
    if (entries[v] == base) run.base_at = v;
    run.programs[v].call(op, run.bufs.list, scalars, call_options{extent, entries[v]->variant});
  }
}

// Uploads each buffer's input in the run's element type.
ROSTER_INLINE expected<void> upload_tune_inputs(tune_run& run) {
  for (std::size_t i = 0; i < run.bufs.list.size(); ++i) {
    expected<void> ok;
    if (run.type == element_type::f64) {
      ok = run.d.upload(run.bufs.list[i], std::span<const double>(run.inputs[i]));
    } else {
      std::vector<float> f(run.inputs[i].begin(), run.inputs[i].end());
      ok = run.d.upload(run.bufs.list[i], std::span<const float>(f));
    }
    if (!ok) return ok;
  }
  return {};
}

// Returns the outputs: every buffer the signature does not only read, in double.
ROSTER_INLINE expected<std::vector<std::vector<double>>> download_tune_outputs(tune_run& run) {
  std::vector<std::vector<double>> out;
  std::size_t bi = 0;
  for (const auto& p : run.sig) {
    if (!p.is_buffer) continue;
    const buffer& b = run.bufs.list[bi++];
    if (p.mode == access::read) continue;
    std::vector<double> got(b.size);
    if (run.type == element_type::f64) {
      if (auto ok = run.d.download(b, std::span<double>(got)); !ok) return std::move(ok).error();
    } else {
      std::vector<float> f(b.size);
      if (auto ok = run.d.download(b, std::span<float>(f)); !ok) return std::move(ok).error();
      std::copy(f.begin(), f.end(), got.begin());
    }
    out.push_back(std::move(got));
  }
  return out;
}

// Runs variant v once from the inputs and returns its outputs. Also its warm-up.
ROSTER_INLINE expected<std::vector<std::vector<double>>> checked_tune_run(tune_run& run, std::size_t v) {
  if (auto ok = upload_tune_inputs(run); !ok) return std::move(ok).error();
  if (auto ok = run.d.dispatch(run.programs[v]); !ok) return std::move(ok).error();
  if (auto ok = run.d.synchronize(); !ok) return std::move(ok).error();
  return download_tune_outputs(run);
}

// Returns the outputs of the caller's host function `reference` over the
// run's inputs, with the scalars converted as the default variant gets them.
ROSTER_INLINE expected<std::vector<std::vector<double>>> host_tune_reference(const tune_run& run,
                                                                             host_kernel_fn reference,
                                                                             const kernel_entry& base,
                                                                             std::span<const scalar_arg> scalars,
                                                                             std::size_t extent) {
  std::vector<scalar_arg> conv(scalars.size());
  convert_scalars(base, *run.programs[run.base_at].steps().front().call, conv);
  return run.type == element_type::f64 ? host_reference<double>(reference, run.sig, run.inputs, conv, extent)
                                       : host_reference<float>(reference, run.sig, run.inputs, conv, extent);
}

// Returns why the outputs `got` of `variant` are wrong: the first element
// that differs from `want` beyond the element type's tolerance; none when
// every element matches. `reference` names where `want` came from ("" for
// the caller's host function).
ROSTER_INLINE std::optional<error> wrong_tune_output(const tune_run& run, const std::string& variant,
                                                     const std::vector<std::vector<double>>& got,
                                                     const std::vector<std::vector<double>>& want,
                                                     const std::string& reference) {
  const double tol = run.type == element_type::f64 ? 1e-12 : 1e-5;
  for (std::size_t b = 0; b < got.size(); ++b)
    for (std::size_t i = 0; i < got[b].size(); ++i) {
      const double g = got[b][i], w = want[b][i];
      if (std::fabs(g - w) <= tol * std::max(std::fabs(w), 1.0)) continue;
      return error(errc::device_fault,
                   run.what + ": variant '" + variant + "' is wrong: output " + std::to_string(b) + " element " +
                       std::to_string(i) + " is " + fixed(g, 9) + ", the reference " + reference + "gives " +
                       fixed(w, 9) + "; it is never chosen",
                   "fix the variant's kernel (its tests should compare it with the default), or unregister it");
    }
  return std::nullopt;
}

// Runs each variant once and checks its outputs against `want` (the default
// too, when the caller gave the reference); marks the variants whose result
// differs wrong.
ROSTER_INLINE expected<void> check_tune_variants(tune_run& run, const std::vector<std::vector<double>>& want,
                                                 bool caller_reference, std::string_view default_variant,
                                                 std::vector<variant_timing>& variants) {
  const std::string reference =
      caller_reference ? std::string("") : "(variant '" + std::string(default_variant) + "') ";
  for (std::size_t v = 0; v < variants.size(); ++v) {
    auto& t = variants[v];
    if (v == run.base_at && !caller_reference) continue;
    auto got = checked_tune_run(run, v);
    if (!got) return std::move(got).error().prepend(run.what);
    t.wrong = wrong_tune_output(run, t.variant, *got, want, reference);
    if (t.wrong) trace("tuning: " + t.wrong->message());
  }
  return {};
}

// Times each variant not marked wrong `reps` times, the variants interleaved
// so a drift of the machine hits all, and fills in its median and spread.
ROSTER_INLINE expected<void> time_tune_variants(tune_run& run, std::uint32_t reps,
                                                std::vector<variant_timing>& variants) {
  if (auto ok = upload_tune_inputs(run); !ok) return std::move(ok).error().prepend(run.what);
  for (std::uint32_t r = 0; r < reps; ++r)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      if (variants[v].wrong) continue;
      auto t = run.d.timed_dispatch(run.programs[v]);
      if (!t) return std::move(t).error().prepend(run.what);
      variants[v].ns.push_back(static_cast<double>(std::max<std::int64_t>(t->count(), 1)));
    }
  for (auto& t : variants) {
    if (t.wrong) continue;
    const auto s = noise_rule::summarize(t.ns);
    t.median_ns = s.median;
    t.spread = s.spread;
  }
  return {};
}
}  // namespace detail

ROSTER_INLINE std::vector<error> kernel_tuning::refused() const {
  std::vector<error> out;
  for (const auto& v : variants)
    if (v.wrong) out.push_back(*v.wrong);
  return out;
}

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
    const auto d = noise_rule::judge({base->median_ns, base->spread}, {v.median_ns, v.spread}, min_gain);
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

  // Buffers of `size` elements with fixed inputs; the scalars given or defaults.
  detail::tune_run run(d, type, what, (*base)->signature);
  if (auto ok = detail::allocate_tune_buffers(run, size); !ok) return std::move(ok).error();
  const std::vector<scalar_arg> scalars = o.scalars.empty() ? detail::default_tune_scalars(run.sig) : o.scalars;
  detail::build_tune_programs(run, entries, *base, op, scalars, o.extent);
  auto extent = check_call(*run.programs[run.base_at].steps().front().call);
  if (!extent) return std::move(extent).error().prepend(what);

  // The reference: the caller's host function, else the default variant's result.
  std::vector<std::vector<double>> want;
  if (o.reference != nullptr) {
    auto r = detail::host_tune_reference(run, o.reference, **base, scalars, *extent);
    if (!r) return std::move(r).error();
    want = std::move(*r);
  }
  kernel_tuning out;
  out.variants.resize(entries.size());
  for (std::size_t v = 0; v < entries.size(); ++v) {
    out.variants[v].variant = std::string(entries[v]->variant);
    out.variants[v].is_default = v == run.base_at;
  }
  if (o.reference == nullptr) {
    auto got = detail::checked_tune_run(run, run.base_at);
    if (!got) return std::move(got).error().prepend(what);
    want = std::move(*got);
  }
  if (auto ok = detail::check_tune_variants(run, want, o.reference != nullptr, (*base)->variant, out.variants); !ok)
    return std::move(ok).error();
  if (out.variants[run.base_at].wrong)
    return *out.variants[run.base_at].wrong;  // nothing to compare with: no choice

  if (auto ok = detail::time_tune_variants(run, o.reps, out.variants); !ok) return std::move(ok).error();
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
