// roster-info bench: the STREAM set on each adapter, tuning records, SVG.

#include "info.hpp"

#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/select.hpp>
#include <roster/native.hpp>
#include <roster/noise_rule.hpp>
#include <roster/output.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>

namespace roster::info {

namespace {

// Units of progress per adapter: every op on both types, plus one per grid-sync shape.
std::size_t units_per_adapter(const bench_options& o) {
  return std::size(bench_ops) * std::size(bench_types) + o.shapes.size();
}
constexpr double scalar = 0.4;

struct progress {
  bool bar = false;
  std::size_t done = 0, total = 0;
  void step(const std::string& what, const std::string& result) {
    ++done;
    if (bar) {
      constexpr int width = 30;
      const int filled = total == 0 ? width : static_cast<int>(width * done / total);
      say(fmt::format("\r[{}{}] {:>3}/{} {}\033[K", std::string(static_cast<std::size_t>(filled), '#'),
                      std::string(static_cast<std::size_t>(width - filled), ' '), done, total, one_line(what, 256)));
      if (done == total) say("\r\033[K");
    } else {
      say(fmt::format("{}: {}\n", one_line(what, 256), one_line(result, 1024)));
    }
    flush_out();
  }
  // Steps over n units that share one result (an adapter that did not
  // open): the bar moves by n, the log says it once.
  void skip(const std::string& what, const std::string& result, std::size_t n) {
    if (n == 0) return;
    done += n - 1;
    step(what, result);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Times a program reps times after one warm-up run; returns each run in ns.
expected<std::vector<double>> time_runs(device& d, const program& p, unsigned reps) {
  if (auto ok = d.dispatch(p); !ok) return std::move(ok).error();
  if (auto ok = d.synchronize(); !ok) return std::move(ok).error();
  std::vector<double> ns;
  ns.reserve(reps);
  for (unsigned i = 0; i < reps; ++i) {
    auto t = d.timed_dispatch(p);
    if (!t) return std::move(t).error();
    ns.push_back(static_cast<double>(std::max<std::int64_t>(t->count(), 1)));
  }
  return ns;
}

// Times a program reps times after one warm-up run; returns the median in ns.
expected<double> time_median(device& d, const program& p, unsigned reps) {
  auto ns = time_runs(d, p, reps);
  if (!ns) return std::move(ns).error();
  return median(std::move(*ns));
}

// The value every element of a, b, c and r holds, computed on the host in
// double: stream_buffers fills a, b, c, r with 1, 2, 0, 0 and each op of
// bench_ops, run any number of times, writes the same value again.
struct reference {
  double a = 1.0, b = 2.0, c = 0.0, r = 0.0;
  // Applies op x over n elements; returns the value its output must hold.
  double apply(op x, std::uint64_t n) {
    switch (x) {
      case op::copy: return c = a;
      case op::mul: return b = scalar * c;
      case op::add: return c = a + b;
      case op::triad: return a = b + scalar * c;
      default: return r = static_cast<double>(n) * a * b;
    }
  }
};

struct wrong_element {
  std::size_t index = 0;
  double got = 0.0;
};

// Returns the first element of out that differs from want beyond what op x
// may round, or nothing when all hold it.
expected<std::optional<wrong_element>> first_wrong(device& d, const buffer& out, op x, element_type type,
                                                   double want) {
  const std::size_t n = out.size;
  std::vector<double> got(n);
  if (type == element_type::f64) {
    if (auto ok = d.download(out, std::span<double>(got)); !ok) return std::move(ok).error();
  } else {
    std::vector<float> f(n);
    if (auto ok = d.download(out, std::span<float>(f)); !ok) return std::move(ok).error();
    std::copy(f.begin(), f.end(), got.begin());
  }
  // Element-wise ops round once or twice; a dot sums n products (the
  // backends reduce in a tree or in per-thread partial sums).
  const bool f64 = type == element_type::f64;
  const double tol = x == op::dot ? (f64 ? 1e-9 : 1e-3) : (f64 ? 1e-13 : 1e-6);
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(got[i] - want) <= tol * std::fabs(want) + 1e-300)) return wrong_element{i, got[i]};
  return std::optional<wrong_element>{};
}

// Checks the output of op x against the reference value; a wrong element is
// an error naming it, so a fast but wrong kernel is never recorded.
expected<void> verify(device& d, const buffer& out, op x, element_type type, double want) {
  auto bad = first_wrong(d, out, x, type, want);
  if (!bad) return std::move(bad).error();
  if (!*bad) return {};
  return make_error(errc::device_fault,
                    fmt::format("{} {} {}: wrong result: element {} of {} is {:.9g}, the reference is {:.9g}; "
                                "nothing is recorded for this adapter",
                                d.adapter().spec(), to_string(type), to_string(x), (*bad)->index, out.size,
                                (*bad)->got, want),
                    "the backend's kernel for this op is wrong: run its op tests (meson test --suite backends) "
                    "and fix the kernel before benchmarking it");
}

// Appends op o over the four stream buffers (the roles reference::apply gives them).
void append_op(program& p, op o, const buffer& a, const buffer& b, const buffer& c, const buffer& r) {
  switch (o) {
    case op::copy: p.copy(c, a); break;
    case op::mul: p.mul(b, c, scalar); break;
    case op::add: p.add(c, a, b); break;
    case op::triad: p.triad(a, b, c, scalar); break;
    default: p.dot(r, a, b); break;
  }
}

program one_op(op o, const buffer& a, const buffer& b, const buffer& c, const buffer& r) {
  program p;
  append_op(p, o, a, b, c, r);
  return p;
}

struct target {
  const backend_registration* backend = nullptr;
  std::uint32_t ordinal = 0;
  std::string spec;
};

// Four buffers of one type on one device, filled; released on destruction.
struct stream_buffers {
  device& d;
  std::optional<buffer> a, b, c, r;
  std::optional<roster::error> error;
  stream_buffers(device& dev, element_type type, std::uint64_t n) : d(dev) {
    for (auto [slot, count] : {std::pair{&a, n}, {&b, n}, {&c, n}, {&r, std::uint64_t{1}}}) {
      auto x = d.allocate(type, count);
      if (!x) {
        error = x.error();
        return;
      }
      *slot = *x;
    }
    if (auto ok = refill(); !ok) error = ok.error();
  }
  // Sets a, b, c, r to 1, 2, 0, 0: the reference's first values.
  expected<void> refill() {
    program init;
    init.fill(*a, 1.0).fill(*b, 2.0).fill(*c, 0.0).fill(*r, 0.0);
    if (auto ok = d.dispatch(init); !ok) return ok;
    return d.synchronize();
  }
  ~stream_buffers() {
    for (auto* x : {&a, &b, &c, &r})
      if (*x) (void)d.release(**x);
  }
  stream_buffers(const stream_buffers&) = delete;
  stream_buffers& operator=(const stream_buffers&) = delete;
  // The program of a grid-sync shape (parse_bench_shape): its pieces with a
  // grid_sync between each two; "triad|dot" is triad; grid_sync; dot.
  program shape_program(const std::vector<std::vector<op>>& pieces) const {
    program q;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (i > 0) q.grid_sync();
      for (op x : pieces[i]) append_op(q, x, *a, *b, *c, *r);
    }
    return q;
  }
  // Runs a shape's program once from the first values and checks every
  // buffer against the reference, so a fast but wrong run is never recorded.
  // `wrong` says whether an error is a wrong result (rather than a failed call).
  expected<void> check_shape(const std::vector<std::vector<op>>& pieces, const program& p, element_type type,
                             std::string_view shape, std::string_view how, bool& wrong) {
    if (auto ok = refill(); !ok) return ok;
    if (auto ok = d.dispatch(p); !ok) return ok;
    if (auto ok = d.synchronize(); !ok) return ok;
    reference ref;
    bool dot = false;
    for (const auto& piece : pieces)
      for (op x : piece) ref.apply(x, a->size), dot = dot || x == op::dot;
    const std::pair<const char*, std::pair<const buffer*, double>> outs[] = {
        {"a", {&*a, ref.a}}, {"b", {&*b, ref.b}}, {"c", {&*c, ref.c}}, {"r", {&*r, ref.r}}};
    for (const auto& [name, o] : outs) {
      const bool sum = o.first == &*r && dot;
      auto bad = first_wrong(d, *o.first, sum ? op::dot : op::triad, type, o.second);
      if (!bad) return std::move(bad).error();
      wrong = bad->has_value();
      if (wrong)
        return make_error(errc::device_fault,
                          fmt::format("{} {} grid sync {} ({}): wrong result: element {} of {} ({}) is {:.9g}, the "
                                      "reference is {:.9g}; this shape's timings are not recorded",
                                      d.adapter().spec(), to_string(type), shape, how, (*bad)->index,
                                      o.first->size, name, (*bad)->got, o.second),
                          "the backend runs this program wrong " + std::string(how == "split" ? "cut at its grid_syncs" : "in one launch") +
                              ": run its op tests (meson test --suite backends) and fix it before benchmarking it");
    }
    return {};
  }
};

// The kernel ops with more than one variant on a backend, with their element type.
std::vector<std::pair<std::string_view, element_type>> tunable_kernels(std::string_view backend) {
  std::vector<std::pair<std::string_view, element_type>> out;
  const auto all = inventory<kernel_entry>();  // sorted by (op, backend, type, variant)
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j]->op == all[i]->op && all[j]->backend == all[i]->backend &&
           all[j]->type == all[i]->type)
      ++j;
    if (all[i]->backend == backend && j - i > 1) out.emplace_back(all[i]->op, all[i]->type);
    i = j;
  }
  return out;
}

// Times and checks the variants of every kernel op that has several here; a
// refused variant is an error and never chosen (roster::tune_kernel).
void bench_kernels(device& d, const bench_options& o, bench_result& res) {
  const bool f64 = d.caps().f64;
  for (const auto& [name, type] : tunable_kernels(res.info.backend)) {
    if (type == element_type::f64 && !f64) continue;
    auto t = tune_kernel(d, name, type, o.size, tune_options{.reps = o.reps});
    if (!t) {
      res.errors.push_back(t.error());
      continue;
    }
    for (auto& e : t->refused()) {
      res.errors.push_back(e);
      res.wrong_kernel = true;
    }
    if (!o.progress)
      say(fmt::format("{} kernel {} {}: variant '{}' ({} against the default's {})\n", res.spec, name, to_string(type),
                      t->choice.variant, duration_text(t->choice.variant_ns), duration_text(t->choice.baseline_ns)));
    res.kernels.push_back(std::move(*t));
  }
}

// A grid-sync shape on one adapter: its pieces, its native runs, and why it
// has no figures.
struct shape_case {
  std::vector<std::vector<op>> pieces;
  std::vector<double> native_runs;
  std::string note;  // why it has no figures, for the progress line
};

// Returns the shapes this adapter can run, with their pieces (the command
// line checked them); one it cannot run has a note saying why.
std::vector<shape_case> shape_cases(const bench_options& o, const device_caps& caps, bench_result& res) {
  const bool compare_sync = caps.native_grid_sync && caps.ops.contains(op::grid_sync);
  std::vector<shape_case> cases(o.shapes.size());
  for (std::size_t i = 0; i < o.shapes.size(); ++i) {
    res.shapes.emplace_back().shape = o.shapes[i];
    auto pieces = parse_bench_shape(o.shapes[i]);
    if (!pieces) {
      res.errors.push_back(pieces.error());
      cases[i].note = "not a shape";
      continue;
    }
    cases[i].pieces = std::move(*pieces);
    for (const auto& piece : cases[i].pieces)
      for (op x : piece)
        if (!caps.ops.contains(x)) cases[i].note = fmt::format("{} not supported", to_string(x));
    if (!compare_sync) cases[i].note = "no native grid sync";
  }
  return cases;
}

// Times and checks each op of bench_ops on bufs, one progress step each.
void bench_stream(device& d, const device_caps& caps, stream_buffers& bufs, element_type type,
                  const bench_options& o, progress& bar, bench_result& res) {
  const std::string tname(to_string(type));
  reference ref;
  bool known = true;  // the arrays hold the reference's values
  for (op x : bench_ops) {
    const std::string what = fmt::format("{} {} {}", res.spec, tname, to_string(x));
    if (!caps.ops.contains(x)) {
      bar.step(what, "not supported");
      continue;
    }
    program p = one_op(x, *bufs.a, *bufs.b, *bufs.c, *bufs.r);
    auto ns = time_median(d, p, o.reps);
    if (!ns) {
      res.errors.push_back(ns.error());
      bar.step(what, "failed");
      known = false;
      continue;
    }
    // Every result is checked before it counts; a wrong one bars the adapter's record.
    const double want = ref.apply(x, o.size);
    const buffer& out = x == op::copy || x == op::add ? *bufs.c
                        : x == op::mul                ? *bufs.b
                        : x == op::triad              ? *bufs.a
                                                      : *bufs.r;
    if (auto ok = known ? verify(d, out, x, type, want) : expected<void>{}; !ok) {
      res.errors.push_back(ok.error());
      res.wrong = true;
      bar.step(what, "wrong result");
      known = false;
      continue;
    }
    const double gbps = static_cast<double>(bytes_moved(p.steps()[0])) / *ns;
    res.figures.push_back({x, type, gbps});
    bar.step(what, fmt::format("{:.1f} GB/s", gbps));
  }
}

// Times each shape that has no note in one launch on bufs and checks its result.
void time_native_shapes(device& d, stream_buffers& bufs, element_type type, const bench_options& o,
                        std::vector<shape_case>& cases, bench_result& res) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].note.empty()) continue;
    shape_result& sr = res.shapes[i];
    const program p = bufs.shape_program(cases[i].pieces);
    auto native = time_runs(d, p, o.reps);
    if (!native) {
      res.errors.push_back(native.error());
      cases[i].note = "failed";
    } else if (auto ok = bufs.check_shape(cases[i].pieces, p, type, sr.shape, "native", sr.wrong); !ok) {
      res.errors.push_back(ok.error());
      cases[i].note = sr.wrong ? "wrong result" : "failed";
    } else {
      cases[i].native_runs = std::move(*native);
      sr.native_ns = median(cases[i].native_runs);
    }
  }
}

// Times each shape with a native figure cut at its grid_syncs, and decides
// between the two. The split runs on a fresh device: the wrapper tells the
// device it is cut, which changes how it runs (e.g. a dot's final sum), so it
// cannot share the native one.
void time_split_shapes(element_type sync_type, const bench_options& o, std::vector<shape_case>& cases,
                       bench_result& res) {
  const bool any_native = std::any_of(res.shapes.begin(), res.shapes.end(),
                                      [](const shape_result& s) { return s.native_ns.has_value(); });
  if (!any_native) return;
  auto split = acquire(res.spec, acquire_options{.force_split = true});
  std::optional<stream_buffers> bufs;
  if (!split) res.errors.push_back(split.error());
  else if (bufs.emplace(**split, sync_type, o.size); bufs->error) res.errors.push_back(*bufs->error);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    shape_result& sr = res.shapes[i];
    if (!sr.native_ns) continue;
    if (!split || bufs->error) {
      cases[i].note = "failed";
      continue;
    }
    const program p = bufs->shape_program(cases[i].pieces);
    auto cut = time_runs(**split, p, o.reps);
    if (!cut) {
      res.errors.push_back(cut.error());
      cases[i].note = "failed";
    } else if (auto ok = bufs->check_shape(cases[i].pieces, p, sync_type, sr.shape, "split", sr.wrong); !ok) {
      res.errors.push_back(ok.error());
      cases[i].note = sr.wrong ? "wrong result" : "failed";
    } else {
      sr.split_ns = median(*cut);
      sr.decision = roster::noise_rule::judge(cases[i].native_runs, *cut);  // split replaces native only beyond the noise
    }
  }
}

// Steps the progress once for each shape: its figures, or why it has none.
void step_shapes(const std::vector<shape_case>& cases, element_type sync_type, progress& bar,
                 const bench_result& res) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const shape_result& sr = res.shapes[i];
    bar.step(fmt::format("{} grid sync {}", res.spec, sr.shape),
             sr.native_ns && sr.split_ns && !sr.wrong
                 ? fmt::format("native {}, split {} ({}; gain {:+.1f}%, spread {:.1f}%)", duration_text(*sr.native_ns),
                               duration_text(*sr.split_ns), to_string(sync_type), sr.decision.gain * 100,
                               sr.decision.spread * 100)
                 : (cases[i].note.empty() ? std::string("failed") : cases[i].note));
  }
}

// Measures one adapter into res: the STREAM set on each type, each shape in
// one launch and cut, and the kernel variants; one progress step per unit.
void bench_one(const target& t, const bench_options& o, progress& bar, bench_result& res) {
  std::size_t units = 0;
  const std::size_t units_per_adapter = info::units_per_adapter(o);
  // No wrappers: native grid sync where it has it.
  auto opened = acquire(std::string(t.backend->id) + ":" + std::to_string(t.ordinal),
                        acquire_options{.wrap = false});
  if (!opened) {
    res.errors.push_back(opened.error());
    bar.skip(res.spec, "did not open", units_per_adapter);
    return;
  }
  std::unique_ptr<device> d = std::move(*opened);
  res.info = d->adapter();
  // Before any dispatch: CUDA's module load is paid (and timed) here.
  if (auto load = kernels_loaded(*d); load) res.load = std::move(*load); else res.errors.push_back(load.error());
  const device_caps caps = d->caps();
  const element_type sync_type = caps.f64 ? element_type::f64 : element_type::f32;
  std::vector<shape_case> cases = shape_cases(o, caps, res);
  for (element_type type : bench_types) {
    const std::string tname(to_string(type));
    auto skip_type = [&](const char* why) {
      for (op x : bench_ops) ++units, bar.step(fmt::format("{} {} {}", res.spec, tname, to_string(x)), why);
    };
    if (type == element_type::f64 && !caps.f64) {
      skip_type("no double support");
      continue;
    }
    stream_buffers bufs(*d, type, o.size);
    if (bufs.error) {
      res.errors.push_back(*bufs.error);
      skip_type("not allocated");
      continue;
    }
    bench_stream(*d, caps, bufs, type, o, bar, res);
    units += std::size(bench_ops);
    if (type == sync_type) time_native_shapes(*d, bufs, type, o, cases, res);
  }
  if (o.kernels) bench_kernels(*d, o, res);
  d.reset();
  time_split_shapes(sync_type, o, cases, res);
  step_shapes(cases, sync_type, bar, res);
  units += cases.size();
  bar.skip(res.spec, "skipped", units_per_adapter - std::min(units, units_per_adapter));
}

// Adds the adapter each --adapter names to targets; usage_error, said, when
// one is malformed or names an unknown backend.
int named_targets(const std::vector<std::string>& adapters, std::vector<target>& targets) {
  for (const auto& text : adapters) {
    auto spec = parse_spec(text);
    if (!spec) {
      print_error("roster-info bench: --adapter", spec.error());
      return usage_error;
    }
    const backend_registration* b = find_backend(spec->backend);
    if (b == nullptr) {
      print_error("roster-info bench: --adapter " + text,
                  roster::error(errc::not_found, "unknown backend '" + spec->backend + "'; known: " + known_backends(),
                                "name one of the known backends, e.g. --adapter cpu:0"));
      return usage_error;
    }
    targets.push_back({b, spec->ordinal, spec->str()});
  }
  return 0;
}

// Returns every adapter of a dispatching backend that ROSTER_DEVICE_SELECTOR keeps.
std::vector<target> selected_targets() {
  std::vector<target> targets;
  auto sel = selector_from_env();
  if (!sel) print_warning(sel.error());
  for (const auto& b : registered_backends()) {
    if (!b.dispatches) continue;
    auto list = enumerate_adapters(*b.registration);
    if (!list) {
      print_warning(list.error());
      continue;
    }
    for (const auto& a : *list)
      if (!sel || sel->judge(a).kept) targets.push_back({b.registration, a.ordinal, a.spec()});
  }
  return targets;
}

// Returns the exit status the results give: wrong_result for a wrong result,
// nothing_measured, said, for an adapter without figures or no adapter at all.
int results_status(const std::vector<bench_result>& results) {
  bool wrong = false;
  for (const auto& r : results) {
    wrong = wrong || r.wrong || r.wrong_kernel;
    for (const auto& s : r.shapes) wrong = wrong || s.wrong;
  }
  int status = wrong ? wrong_result : 0;
  // An adapter asked for that gave no figure is a failure, not a row of dashes.
  for (const auto& r : results)
    if (r.figures.empty() && !r.wrong) {
      print_error("roster-info bench",
                  roster::error(errc::unavailable,
                                r.spec + ": nothing was measured, so nothing is recorded for it" +
                                    (r.errors.empty() ? std::string(" (it runs none of the bench's ops)")
                                                      : std::string(" (the errors above say why)")),
                                "fix what the error above says (for out of memory, a smaller --size), or leave the "
                                "adapter out (--adapter, or ROSTER_DEVICE_SELECTOR='!" + r.spec + "')"));
      status = worse_status(status, nothing_measured);
    }
  if (results.empty()) {
    print_error("roster-info bench",
                roster::error(errc::not_found, "no adapter to measure: no dispatching backend enumerated one, or the "
                                               "selector dropped every one",
                              "run roster-info to see the adapters and why each was dropped, or name one with "
                              "--adapter"));
    status = worse_status(status, nothing_measured);
  }
  return status;
}

// Writes the chart that --svg asked for; output_failed, said, when it could
// not (a failure, not a warning), else 0.
int write_chart(const std::vector<bench_result>& results, const bench_options& o) {
  const std::string svg = render_svg(results, o);
  // A stream (/dev/stdout, a pipe) is written as one; a file is replaced.
  auto ok = write_output(o.svg, svg, "the chart", "name a file in a folder you may write to");
  if (!ok) {
    say_error("\n");
    print_error("roster-info bench", ok.error());
    return output_failed;
  }
  say(fmt::format("wrote the chart to {}\n", o.svg));
  return 0;
}

}  // namespace

int run_bench(const bench_options& o) {
  // An output over roster's own records (--svg ~/.cache/roster/tuning.json)
  // is refused before anything is measured.
  for (const auto& [option, path] : {std::pair<std::string_view, const std::string*>{"--svg", &o.svg},
                                     {"--export", &o.export_path}})
    if (!path->empty())
      if (auto refused = refuse_tuning_file_output(option, *path, option == "--export")) {
        print_error("roster-info bench", *refused);
        return usage_error;
      }
  // A malformed selector is an error before anything is measured: the bench
  // would measure what it meant to leave out, then the report and bind fail
  // on the same value.
  if (auto sel = selector_from_env(); !sel) {
    print_error("roster-info bench", sel.error());
    return usage_error;
  }
  std::vector<target> targets;
  if (!o.adapters.empty()) {
    if (const int status = named_targets(o.adapters, targets); status != 0) return status;
  } else {
    targets = selected_targets();
  }

  if (const int status = check_requirements(o.require, nullptr); status != 0) return status;

  progress bar;
  bar.bar = o.progress;
  bar.total = targets.size() * units_per_adapter(o);
  const auto alone = measure_alone(o);  // held while measuring
  std::vector<bench_result> results;
  for (const auto& t : targets) {
    bench_result res;
    res.spec = t.spec;
    bench_one(t, o, bar, res);
    if (auto busy = contended(res, o.size)) {  // the load's figure, not the adapter's: said, not recorded
      res.errors.push_back(*busy);
      res.contended = true;
    }
    results.push_back(std::move(res));
  }

  say(render_tables(results, o));
  for (const auto& r : results)
    for (const auto& e : r.errors) say_error("\n" + one_line_message(roster::error(e).prepend(r.spec)) + "\n");
  int status = results_status(results);
  if (o.save && !save_bench_records(results, o)) status = worse_status(status, output_failed);
  if (!o.export_path.empty() && !export_bench_records(results, o)) status = worse_status(status, output_failed);
  if (!o.svg.empty()) status = worse_status(status, write_chart(results, o));
  if (!stdout_written("the bench results")) status = worse_status(status, output_failed);
  return status;
}

}  // namespace roster::info
