// roster-info bench: the tables of its results, and their bar chart (--svg).

#include "info.hpp"

#include <roster/noise_rule.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace roster::info {

std::string render_tables(const std::vector<bench_result>& results, const bench_options& o) {
  std::string out;
  // The GB/s table.
  out += fmt::format("\nGB/s, median of {} reps, {} elements per array\n", o.reps, o.size);
  out += fmt::format("  {:<12} {:<7}", "adapter", "type");
  for (op x : bench_ops) out += fmt::format(" {:>9}", to_string(x));
  out += "\n";
  for (const auto& r : results) {
    for (element_type type : bench_types) {
      out += fmt::format("  {:<12} {:<7}", r.spec, to_string(type));
      for (op x : bench_ops) {
        std::optional<double> v;
        for (const auto& f : r.figures)
          if (f.op == x && f.type == type) v = f.gbps;
        out += fmt::format(" {:>9}", v ? fmt::format("{:.1f}", *v) : std::string("-"));
      }
      out += "\n";
    }
  }
  bool any_load = false;
  for (const auto& r : results) any_load = any_load || r.load.has_value();
  if (any_load) {
    out += "\nKernels' load, once per device (before its first program)\n";
    out += fmt::format("  {:<12} {:>10}  {}\n", "adapter", "time", "how");
    for (const auto& r : results)
      if (r.load) out += fmt::format("  {:<12} {:>10}  {}\n", r.spec, duration_text(static_cast<double>(r.load->ns)), r.load->how);
  }
  auto timed = [](const shape_result& s) { return s.native_ns && s.split_ns && !s.wrong; };
  bool any_sync = false;
  for (const auto& r : results) any_sync = any_sync || std::any_of(r.shapes.begin(), r.shapes.end(), timed);
  if (any_sync) {
    std::size_t w = 12;
    for (const auto& shape : o.shapes) w = std::max(w, shape.size());
    out += fmt::format("\nGrid sync per program shape, '|' a grid_sync (median; the split replaces native only when "
                       "faster beyond the spread and {:.0f}%)\n  {:<12} {:<{}} {:>10} {:>10}  {}\n",
                       roster::noise_rule::min_gain * 100, "adapter", "shape", w, "native", "split", "faster");
    for (const auto& r : results)
      for (const auto& s : r.shapes)
        if (timed(s))
          out += fmt::format("  {:<12} {:<{}} {:>10} {:>10}  {}\n", r.spec, s.shape, w, duration_text(*s.native_ns),
                             duration_text(*s.split_ns), s.decision.change ? "split" : "native");
  }
  bool any_kernels = false;
  for (const auto& r : results) any_kernels = any_kernels || !r.kernels.empty();
  if (any_kernels) {
    out += fmt::format("\nKernel variants, median of {} reps, {} elements per buffer (a variant replaces the default "
                       "only when faster beyond the spread and {:.0f}%)\n"
                       "  {:<12} {:<14} {:<7} {:<18} {:>10} {:>7}  {}\n",
                       o.reps, o.size, roster::noise_rule::min_gain * 100, "adapter", "op", "type", "variant",
                       "median", "spread", "");
    for (const auto& r : results)
      for (const auto& k : r.kernels)
        for (const auto& v : k.variants)
          out += fmt::format("  {:<12} {:<14} {:<7} {:<18} {:>10} {:>6.1f}%  {}\n", r.spec, k.choice.op,
                             to_string(k.choice.type), v.variant,
                             v.wrong ? std::string("-") : duration_text(v.median_ns), v.spread * 100,
                             v.wrong                           ? "wrong result, never chosen"
                             : v.variant == k.choice.variant   ? (v.is_default ? "default, kept" : "chosen")
                             : v.is_default                    ? "default"
                                                               : "");
  }
  return out;
}

std::string render_svg(const std::vector<bench_result>& results, const bench_options& o) {
  // One panel per adapter; in each, a pair of bars (float, double) per op.
  constexpr int width = 720, panel_h = 232, top = 56, left = 70, right = 20, plot_h = 160;
  const int height = top + static_cast<int>(std::max<std::size_t>(results.size(), 1)) * panel_h + 8;
  const char* colours[2] = {"#4e79a7", "#f28e2b"};
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">roster-info bench: GB/s, median of {3} reps, "
      "{4} elements</text>\n",
      width, height, left, o.reps, o.size);
  for (int k = 0; k < 2; ++k)
    s += fmt::format("<rect x=\"{}\" y=\"34\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"45\">{}</text>\n",
                     left + k * 90, colours[k], left + k * 90 + 16, to_string(bench_types[k]));
  int y0 = top;
  for (const auto& r : results) {
    double most = 0;
    for (const auto& f : r.figures) most = std::max(most, f.gbps);
    // A round axis maximum: 1, 2 or 5 times a power of ten.
    double axis = 1;
    while (axis < most) {
      if (axis * 2 >= most) { axis *= 2; break; }
      if (axis * 5 >= most) { axis *= 5; break; }
      axis *= 10;
    }
    const int base = y0 + 30 + plot_h;
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{} {}</text>\n", left, y0 + 18,
                     r.spec, r.info.name);
    for (int g = 0; g <= 4; ++g) {
      const int y = base - plot_h * g / 4;
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>"
                       "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:g}</text>\n",
                       left, y, width - right, y, left - 6, y + 4, axis * g / 4);
    }
    const int slot = (width - left - right) / static_cast<int>(std::size(bench_ops));
    for (std::size_t i = 0; i < std::size(bench_ops); ++i) {
      const int x0 = left + static_cast<int>(i) * slot;
      for (int k = 0; k < 2; ++k) {
        std::optional<double> v;
        for (const auto& f : r.figures)
          if (f.op == bench_ops[i] && f.type == bench_types[k]) v = f.gbps;
        const int bw = slot / 3, bx = x0 + slot / 6 + k * bw;
        if (!v) {
          s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#999\">n/a</text>\n", bx + bw / 2,
                           base - 4);
          continue;
        }
        const int h = most > 0 ? static_cast<int>(plot_h * *v / axis + 0.5) : 0;
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} {} {}: {:.1f} "
                         "GB/s</title></rect>\n<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{:.1f}"
                         "</text>\n",
                         bx, base - h, bw - 2, h, colours[k], r.spec, to_string(bench_types[k]),
                         to_string(bench_ops[i]), *v, bx + bw / 2, base - h - 3, *v);
      }
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + slot / 2, base + 16,
                       to_string(bench_ops[i]));
    }
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>"
                     "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n"
                     "<text x=\"16\" y=\"{4}\" transform=\"rotate(-90 16 {4})\" text-anchor=\"middle\">GB/s</text>\n",
                     left, base - plot_h, base, width - right, base - plot_h / 2);
    y0 += panel_h;
  }
  if (results.empty())
    s += fmt::format("<text x=\"{}\" y=\"{}\">no adapter measured</text>\n", left, top + 40);
  s += "</svg>\n";
  return s;
}

}  // namespace roster::info
