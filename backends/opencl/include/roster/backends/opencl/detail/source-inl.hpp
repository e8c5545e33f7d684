#pragma once
// The OpenCL C of the built-in ops: one kernel per pass layout (element-wise
// steps fused, with a dot's partial sums at the end), and the dot's final sum.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/source.hpp>

#include <string>

namespace roster::opencl::detail {

ROSTER_INLINE std::string number(std::size_t n) { return std::to_string(n); }

// The statement of step k over one vector (or one element when width is 1) at
// index v: VW(b)/VR(b) name buffer b's vector at v, s<k> the step's scalar.
ROSTER_INLINE std::string vector_statement(const pass_step& st, std::size_t k, const std::string& vt,
                             const std::vector<bool>& written) {
  auto at = [&](std::uint8_t b) { return std::string(written[b] ? "VW(b" : "VR(b") + number(b) + ")"; };
  const std::string s = "s" + number(k);
  switch (st.o) {
    case op::fill: return at(st.out) + " = (" + vt + ")(" + s + ");";
    case op::copy: return at(st.out) + " = " + at(st.in1) + ";";
    case op::mul: return at(st.out) + " = " + s + " * " + at(st.in1) + ";";
    case op::add: return at(st.out) + " = " + at(st.in1) + " + " + at(st.in2) + ";";
    case op::triad: return at(st.out) + " = " + at(st.in1) + " + " + s + " * " + at(st.in2) + ";";
    case op::nstream: return at(st.out) + " += " + at(st.in1) + " + " + s + " * " + at(st.in2) + ";";
    case op::dot: return "vacc += " + at(st.in1) + " * " + at(st.in2) + ";";
    case op::grid_sync: case op::call: break;
  }
  return {};
}

// The same statement over element i of the scalar tail.
ROSTER_INLINE std::string element_statement(const pass_step& st, std::size_t k) {
  auto at = [](std::uint8_t b) { return "b" + number(b) + "[i]"; };
  const std::string s = "s" + number(k);
  switch (st.o) {
    case op::fill: return at(st.out) + " = " + s + ";";
    case op::copy: return at(st.out) + " = " + at(st.in1) + ";";
    case op::mul: return at(st.out) + " = " + s + " * " + at(st.in1) + ";";
    case op::add: return at(st.out) + " = " + at(st.in1) + " + " + at(st.in2) + ";";
    case op::triad: return at(st.out) + " = " + at(st.in1) + " + " + s + " * " + at(st.in2) + ";";
    case op::nstream: return at(st.out) + " += " + at(st.in1) + " + " + s + " * " + at(st.in2) + ";";
    case op::dot: return "acc += " + at(st.in1) + " * " + at(st.in2) + ";";
    case op::grid_sync: case op::call: break;
  }
  return {};
}

// Sums acc over the work-group into sums[0] (every item reaches each barrier).
ROSTER_INLINE std::string group_sum(std::size_t local) {
  return "  const uint lid = get_local_id(0);\n"
         "  sums[lid] = acc;\n"
         "  barrier(CLK_LOCAL_MEM_FENCE);\n"
         "  for (uint w = " + number(local / 2) + "; w > 0; w >>= 1) {\n"
         "    if (lid < w) sums[lid] += sums[lid + w];\n"
         "    barrier(CLK_LOCAL_MEM_FENCE);\n"
         "  }\n";
}

ROSTER_INLINE std::string preamble(element_type t) {
  return t == element_type::f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
}


ROSTER_INLINE std::string pass_layout::key() const {
  std::string k;
  k += type == element_type::f64 ? 'd' : 'f';
  k += number(width);
  k += wide ? 'l' : 'u';
  k += runs ? 'r' : 's';
  k += number(buffers);
  for (const auto& st : steps) {
    k += '|';
    k += to_string(st.o);
    k += ',' + number(st.out) + ',' + number(st.in1) + ',' + number(st.in2);
  }
  return k;
}

ROSTER_INLINE std::string pass_source(const pass_layout& layout, std::size_t local) {
  const std::string t = layout.type == element_type::f64 ? "double" : "float";
  const unsigned w = layout.width;
  const std::string vt = w == 1 ? t : t + number(w);
  const std::string index = layout.wide ? "ulong" : "uint";
  std::vector<bool> written(layout.buffers, false);
  for (const auto& st : layout.steps)
    if (st.o != op::dot) written[st.out] = true;

  std::string s = preamble(layout.type);
  // Buffers start at the cl_mem's base, aligned for any built-in type, so a
  // vector of 16 bytes at index v is one aligned load or store.
  s += "#define VW(b) (((global " + vt + "*)(b))[v])\n";
  s += "#define VR(b) (((global const " + vt + "*)(b))[v])\n";
  s += "__attribute__((reqd_work_group_size(" + number(local) + ", 1, 1)))\n";
  s += std::string("kernel void ") + pass_kernel_name + "(";
  // Distinct cl_mem objects never overlap: restrict holds.
  for (unsigned b = 0; b < layout.buffers; ++b)
    s += std::string(b == 0 ? "" : ", ") + "global " + (written[b] ? "" : "const ") + t + "* restrict b" + number(b);
  s += ", const " + index + " nv";
  for (std::size_t k = 0; k < layout.steps.size(); ++k) {
    s += ", const " + index + " n" + number(k);
    if (has_scalar(layout.steps[k].o)) s += ", const " + t + " s" + number(k);
  }
  if (layout.has_dot()) s += ", global " + t + "* restrict partial";
  s += ") {\n";
  if (layout.has_dot()) s += "  local " + t + " sums[" + number(local) + "];\n  " + t + " acc = 0;\n  " + vt + " vacc = (" + vt + ")(0);\n";
  if (layout.runs) {
    // A CPU runs a work-group's items one after another: each takes adjacent
    // vectors, so the caches and the prefetcher see one stream per item.
    s += "  const " + index + " per = (nv + (" + index + ")get_global_size(0) - 1) / (" + index + ")get_global_size(0);\n";
    s += "  const " + index + " first = (" + index + ")get_global_id(0) * per;\n";
    s += "  const " + index + " last = min(first + per, nv);\n";
    s += "  for (" + index + " v = first; v < last; ++v) {\n";
  } else {
    s += "  for (" + index + " v = (" + index + ")get_global_id(0); v < nv; v += (" + index + ")get_global_size(0)) {\n";
  }
  if (w > 1) s += "    const " + index + " e = v * " + number(w) + ";\n";
  for (std::size_t k = 0; k < layout.steps.size(); ++k) {
    const pass_step& st = layout.steps[k];
    const std::string n = "n" + number(k);
    if (w == 1)
      s += "    if (v < " + n + ") { " + vector_statement(st, k, vt, written) + " }\n";
    else
      s += "    if (e + " + number(w) + " <= " + n + ") { " + vector_statement(st, k, vt, written) + " }\n" +
           "    else for (" + index + " i = e; i < " + n + "; ++i) { " + element_statement(st, k) + " }\n";
  }
  s += "  }\n";
  if (layout.has_dot()) {
    if (w == 1) s += "  acc += vacc;\n";
    for (unsigned lane = 0; w > 1 && lane < w; ++lane) s += "  acc += vacc.s" + number(lane) + ";\n";
    s += group_sum(local);
    s += "  if (lid == 0) partial[get_group_id(0)] = sums[0];\n";
  }
  s += "}\n";
  return s;
}

ROSTER_INLINE std::string dot_final_source(element_type type, std::size_t local) {
  const std::string t = type == element_type::f64 ? "double" : "float";
  std::string s = preamble(type);
  s += "__attribute__((reqd_work_group_size(" + number(local) + ", 1, 1)))\n";
  s += std::string("kernel void ") + dot_final_name + "(global " + t + "* r, global const " + t +
       "* partial, const uint count) {\n";
  s += "  local " + t + " sums[" + number(local) + "];\n";
  s += "  " + t + " acc = 0;\n";
  s += "  for (uint i = get_local_id(0); i < count; i += " + number(local) + ") acc += partial[i];\n";
  s += group_sum(local);
  s += "  if (lid == 0) r[0] = sums[0];\n";
  s += "}\n";
  return s;
}

}  // namespace roster::opencl::detail
