// my_backend's device: buffers in host memory, and the ops of the step table.

#include <my_backend.hpp>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace my_backend {

namespace {

roster::adapter_info make_adapter() {
  roster::adapter_info a;
  a.backend = "myhost";
  a.ordinal = 0;
  a.name = "host memory (my_backend example)";
  // Type cpu: circuits merge this adapter into the host CPU's circuit.
  a.type = roster::device_type::cpu;
  a.compute_units = 1;
  a.native_grid_sync = true;  // steps run in order, so grid_sync is free
  a.f64 = true;
  a.ops = roster::op_set::all();
  return a;
}

}  // namespace

device::device() : adapter_(make_adapter()) {}

roster::expected<std::unique_ptr<device>> device::open() { return std::unique_ptr<device>(new device()); }

roster::device_caps device::caps() const noexcept {
  return {adapter_.native_grid_sync, adapter_.f64, adapter_.ops};
}

roster::expected<std::uint32_t> device::do_allocate(roster::element_type t, std::size_t n) {
  memory m;
  m.type = t;
  m.size = n;
  if (t == roster::element_type::f32) m.f32.resize(n);
  else m.f64.resize(n);
  const std::uint32_t slot = next_slot_++;
  memory_.emplace(slot, std::move(m));
  return slot;
}

roster::expected<void> device::do_release(std::uint32_t slot) {
  memory_.erase(slot);
  return {};
}

bool device::owns(const roster::buffer& b) const noexcept {
  auto it = memory_.find(b.slot);
  return it != memory_.end() && it->second.type == b.type && it->second.size == b.size;
}

template <class T>
T* device::data(const roster::buffer& b) {
  memory& m = memory_.at(b.slot);
  if constexpr (std::is_same_v<T, float>) return m.f32.data();
  else return m.f64.data();
}

// The core checked the buffer (owner, slot, type, size) before calling.
roster::expected<void> device::do_upload(const roster::buffer& b, const void* src) {
  void* dst = b.type == roster::element_type::f32 ? static_cast<void*>(data<float>(b)) : data<double>(b);
  std::memcpy(dst, src, b.size * roster::size_of(b.type));
  return {};
}

roster::expected<void> device::do_download(const roster::buffer& b, void* dst) {
  const void* src = b.type == roster::element_type::f32 ? static_cast<void*>(data<float>(b)) : data<double>(b);
  std::memcpy(dst, src, b.size * roster::size_of(b.type));
  return {};
}

// One step of the step table: out, in1 and in2 are the program's buffers in
// the order program.hpp names them (triad(a, b, c, s): out a, in1 b, in2 c).
template <class T>
void device::run(const roster::step& s) {
  const std::size_t n = s.out.size;
  const T x = static_cast<T>(s.scalar);
  T* out = data<T>(s.out);
  switch (s.op) {
    case roster::op::fill: std::fill_n(out, n, x); break;
    case roster::op::copy: std::copy_n(data<T>(s.in1), n, out); break;
    case roster::op::mul: {
      const T* c = data<T>(s.in1);
      for (std::size_t i = 0; i < n; ++i) out[i] = x * c[i];
      break;
    }
    case roster::op::add: {
      const T *a = data<T>(s.in1), *b = data<T>(s.in2);
      for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      break;
    }
    case roster::op::triad: {
      const T *b = data<T>(s.in1), *c = data<T>(s.in2);
      for (std::size_t i = 0; i < n; ++i) out[i] = b[i] + x * c[i];
      break;
    }
    case roster::op::nstream: {
      const T *b = data<T>(s.in1), *c = data<T>(s.in2);
      for (std::size_t i = 0; i < n; ++i) out[i] += b[i] + x * c[i];
      break;
    }
    case roster::op::dot: {  // out[0] = sum of in1[i] * in2[i], over in1's length
      const T *a = data<T>(s.in1), *b = data<T>(s.in2);
      double sum = 0.0;
      for (std::size_t i = 0; i < s.in1.size; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
      out[0] = static_cast<T>(sum);
      break;
    }
    case roster::op::grid_sync: break;  // the steps before it are done already
    case roster::op::call: break;       // dispatch_steps runs calls (run_call)
  }
}

// A user's kernel: the entry the call runs here (the variant it names, or the
// default), its arguments built by the core, and the entry point called.
roster::expected<void> device::run_call(const roster::kernel_call& call) {
  auto entry = kernel_for(call);
  if (!entry) return std::move(entry).error();
  // A built-in op called by name, over another element type than the
  // program's built-in steps (the core lowered the others to plain steps).
  const roster::step builtin = roster::builtin_step(**entry, call);
  if (builtin.op == roster::op::grid_sync) return {};
  if (builtin.op != roster::op::call) {
    if (builtin.out.type == roster::element_type::f32) run<float>(builtin);
    else run<double>(builtin);
    return {};
  }
  const kernel_function* f = (*entry)->payload_as<kernel_function>();
  if (f == nullptr || f->run == nullptr)
    return roster::make_error(roster::errc::invalid_argument,
                              "myhost: kernel '" + call.op + "' has no entry point of this backend",
                              "register it with my_backend::kernel, giving a kernel_function");
  roster::call_arguments arguments;
  auto args = arguments.build(**entry, call, [this](const roster::buffer& b) -> void* {
    auto it = memory_.find(b.slot);
    if (it == memory_.end()) return nullptr;
    return b.type == roster::element_type::f32 ? static_cast<void*>(it->second.f32.data()) : it->second.f64.data();
  });
  if (!args) return std::move(args).error();
  f->run(*args);
  return {};
}

// The core validated the steps (buffers live and of one type, lengths agree,
// ops in caps()) before calling; dispatch only does the work.
roster::expected<void> device::dispatch_steps(std::span<const roster::step> steps) {
  for (const roster::step& s : steps) {
    if (s.op == roster::op::grid_sync) continue;
    if (s.op == roster::op::call) {
      if (auto ok = run_call(*s.call); !ok) return ok;
      continue;
    }
    if (s.out.type == roster::element_type::f32) run<float>(s);
    else run<double>(s);
  }
  return {};
}

}  // namespace my_backend
