#pragma once
// Private: the CPU backend's out-of-line code; inline in header-only mode,
// compiled once into roster_cpu otherwise.

#include <roster/backends/cpu.hpp>
#include <roster/backends/cpu/detail/kernels.hpp>

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace roster::cpu {

namespace detail {

inline std::string cpu_read_field(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto b = line.find_first_not_of(" \t", colon + 1);
    return b == std::string::npos ? std::string() : line.substr(b);
  }
  return {};
}

inline std::uint64_t cpu_fnv1a(std::string_view text, std::uint64_t h) noexcept {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The adapter's UUID: a hash of /etc/machine-id (the raw id is never exposed,
// as systemd asks), formatted as an RFC 9562 version-8 UUID. All zero when
// the machine has no readable machine-id.
inline std::array<std::uint8_t, 16> cpu_uuid() {
  std::array<std::uint8_t, 16> u{};
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (!(in >> id) || id.empty()) return u;
  const std::uint64_t h1 = cpu_fnv1a("roster-cpu-uuid:" + id, 14695981039346656037ull);
  const std::uint64_t h2 = cpu_fnv1a(id + ":roster-cpu-uuid", h1 ^ 0x9e3779b97f4a7c15ull);
  for (int i = 0; i < 8; ++i) {
    u[i] = static_cast<std::uint8_t>(h1 >> (8 * i));
    u[8 + i] = static_cast<std::uint8_t>(h2 >> (8 * i));
  }
  u[6] = static_cast<std::uint8_t>((u[6] & 0x0f) | 0x80);  // version 8
  u[8] = static_cast<std::uint8_t>((u[8] & 0x3f) | 0x80);  // RFC variant
  return u;
}

// Partition of [0, blocks) among threads: contiguous, as even as possible.
inline std::size_t cpu_block_begin(std::size_t blocks, unsigned t, unsigned threads) noexcept {
  return blocks * t / threads;
}

// One resolved step of a segment.
template <class T>
struct cpu_step {
  op kind;
  T* out;
  const T* in1;
  const T* in2;
  T scalar;
  std::size_t n;        // elements the step covers (the inputs' length for dot)
  std::size_t partial;  // dot: index of its partial sums
};

// The plain (cached) loop of one step over [lo, lo + n).
template <class T>
ROSTER_CPU_LOOP void cpu_run_plain(const cpu_step<T>& s, std::size_t lo, std::size_t n, double* partials,
                                   std::size_t stride, unsigned t) noexcept {
  switch (s.kind) {
    case op::fill: cpu_fill(s.out + lo, s.scalar, n); break;
    case op::copy: cpu_copy(s.out + lo, s.in1 + lo, n); break;
    case op::mul: cpu_mul(s.out + lo, s.in1 + lo, s.scalar, n); break;
    case op::add: cpu_add(s.out + lo, s.in1 + lo, s.in2 + lo, n); break;
    case op::triad: cpu_triad(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); break;
    case op::nstream: cpu_nstream(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); break;
    case op::dot: partials[s.partial * stride + t] += cpu_dot(s.in1 + lo, s.in2 + lo, n); break;
    case op::grid_sync: case op::call: break;  // never in a fused plan
  }
}

// The same loops compiled for AVX2 (see cpu_has_wide_clone).
template <class T>
ROSTER_CPU_WIDE void cpu_run_plain_wide(const cpu_step<T>& s, std::size_t lo, std::size_t n, double* partials,
                                        std::size_t stride, unsigned t) noexcept {
  cpu_run_plain(s, lo, n, partials, stride, t);
}

template <class T>
inline void cpu_run_step(const cpu_step<T>& s, std::size_t lo, std::size_t hi, double* partials,
                         std::size_t stride, unsigned t, bool streaming = false, bool wide = false) noexcept {
  if (hi > s.n) hi = s.n;
  if (lo >= hi) return;
  const std::size_t n = hi - lo;
  if (streaming) {
    switch (s.kind) {
      case op::fill: cpu_fill_stream(s.out + lo, s.scalar, n); return;
      case op::copy: cpu_copy_stream(s.out + lo, s.in1 + lo, n); return;
      case op::mul: cpu_mul_stream(s.out + lo, s.in1 + lo, s.scalar, n); return;
      case op::add: cpu_add_stream(s.out + lo, s.in1 + lo, s.in2 + lo, n); return;
      case op::triad: cpu_triad_stream(s.out + lo, s.in1 + lo, s.in2 + lo, s.scalar, n); return;
      default: break;  // nstream reads its output; dot stores one value
    }
  }
  if (wide) cpu_run_plain_wide(s, lo, n, partials, stride, t);
  else cpu_run_plain(s, lo, n, partials, stride, t);
}

template <class T>
struct cpu_segment {
  std::size_t first = 0, count = 0;  // range in the plan's steps
  std::size_t length = 0;            // longest step
  std::size_t dots = 0;              // dot steps in it
  bool streaming = false;            // one step over arrays larger than the cache: bypass it
};

template <class T>
struct cpu_plan {
  std::vector<cpu_step<T>> steps;
  std::vector<cpu_segment<T>> segments;
  double* partials = nullptr;
  std::size_t stride = 0;  // doubles between two dot steps' partials (threads, padded)
  detail::cpu_barrier* barrier = nullptr;
  unsigned threads = 1;
  bool wide = false;  // run the AVX2 copy of the plain loops

  void operator()(unsigned t) noexcept {
    for (std::size_t g = 0; g < segments.size(); ++g) {
      const auto& seg = segments[g];
      const std::size_t blocks = (seg.length + cpu::block_elements - 1) / cpu::block_elements;
      const std::size_t b0 = cpu_block_begin(blocks, t, threads), b1 = cpu_block_begin(blocks, t + 1, threads);
      const cpu_step<T>* first = steps.data() + seg.first;
      if (seg.count == 1) {
        // One step: the thread's whole range in one call.
        cpu_run_step(*first, b0 * cpu::block_elements, b1 * cpu::block_elements, partials, stride, t,
                     seg.streaming, wide);
        if (seg.streaming) cpu_stream_fence();  // streaming stores are visible before the barrier
      } else {
        // Fused: each block goes through every step while it is in cache.
        for (std::size_t b = b0; b < b1; ++b)
          for (std::size_t k = 0; k < seg.count; ++k)
            cpu_run_step(first[k], b * cpu::block_elements, (b + 1) * cpu::block_elements, partials, stride, t,
                         false, wide);
      }
      if (seg.dots > 0) {
        barrier->arrive_and_wait();
        if (t == 0) finish_dots(seg);
      }
      if (g + 1 < segments.size()) barrier->arrive_and_wait();
    }
  }

  // Final sum of each dot's per-thread partials, in thread order.
  void finish_dots(const cpu_segment<T>& seg) noexcept {
    for (std::size_t k = seg.first; k < seg.first + seg.count; ++k) {
      const auto& s = steps[k];
      if (s.kind != op::dot) continue;
      double sum = 0.0;
      for (unsigned i = 0; i < threads; ++i) sum += partials[s.partial * stride + i];
      s.out[0] = static_cast<T>(sum);
    }
  }
};

}  // namespace detail

ROSTER_INLINE expected<unsigned> parse_thread_count(std::string_view text) {
  const std::string shown(text);
  auto bad = [&](std::string_view why) {
    return make_error(errc::invalid_argument, "cpu: ROSTER_CPU_THREADS='" + shown + "' " + std::string(why),
                      "set ROSTER_CPU_THREADS to a whole number from 1 to " + std::to_string(max_threads) +
                          ", e.g. ROSTER_CPU_THREADS=8, or unset it to use every hardware thread");
  };
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.empty()) return bad("is empty");
  unsigned long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad("is not a whole number");
    value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value > max_threads) return bad("is more than " + std::to_string(max_threads) + " threads");
  }
  if (value == 0) return bad("asks for no threads");
  return static_cast<unsigned>(value);
}

ROSTER_INLINE expected<unsigned> thread_count() {
  if (const char* env = std::getenv("ROSTER_CPU_THREADS")) return parse_thread_count(env);
  // The CPUs this process may run on (an MPI rank bound to 4 cores gets 4),
  // else every online one.
  unsigned hw = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) hw = static_cast<unsigned>(CPU_COUNT(&set));
  if (hw == 0) hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1u : std::min(hw, max_threads);
}

ROSTER_INLINE adapter_info host_adapter(unsigned threads) {
  adapter_info a;
  a.backend = std::string(backend::id);
  a.ordinal = 0;
  a.type = device_type::cpu;
  a.name = detail::cpu_read_field("/proc/cpuinfo", "model name");
  if (a.name.empty()) a.name = "CPU";
  const std::string vendor = detail::cpu_read_field("/proc/cpuinfo", "vendor_id");
  a.vendor_id = vendor == "GenuineIntel" ? 0x8086u : vendor == "AuthenticAMD" ? 0x1022u : 0u;
  const std::string total = detail::cpu_read_field("/proc/meminfo", "MemTotal");  // "24532000 kB"
  a.memory_bytes = std::strtoull(total.c_str(), nullptr, 10) * 1024u;
  if (a.memory_bytes == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) a.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  utsname un{};
  if (uname(&un) == 0) a.driver_version = std::string(un.sysname) + " " + un.release;
  a.uuid = detail::cpu_uuid();
  a.compute_units = threads;
  a.native_grid_sync = true;
  a.f64 = true;
  a.ops = op_set::all();
  return a;
}

ROSTER_INLINE device::device(unsigned threads, adapter_info info)
    : adapter_(std::move(info)), pool_(threads), wide_loops_(detail::cpu_wide_loops_available()) {
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  streaming_threshold_ = llc > 0 ? static_cast<std::size_t>(llc) : std::size_t{32} << 20;
}

ROSTER_INLINE void device::set_streaming_threshold(std::size_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  streaming_threshold_ = bytes;
}

ROSTER_INLINE std::size_t device::streaming_threshold() const noexcept {
  std::lock_guard lock(mutex_);
  return streaming_threshold_;
}

ROSTER_INLINE bool device::set_wide_loops(bool on) noexcept {
  std::lock_guard lock(mutex_);
  wide_loops_ = on && detail::cpu_wide_loops_available();
  return wide_loops_;
}

ROSTER_INLINE bool device::wide_loops() const noexcept {
  std::lock_guard lock(mutex_);
  return wide_loops_;
}

ROSTER_INLINE device::~device() {
  for (auto& m : memory_)
    if (m.data != nullptr) ::operator delete(m.data, std::align_val_t{buffer_alignment});
}

ROSTER_INLINE expected<std::unique_ptr<device>> device::open(unsigned threads) {
  if (threads == 0 || threads > max_threads)
    return make_error(errc::invalid_argument, "cpu: " + std::to_string(threads) + " threads requested",
                      "ask for 1 to " + std::to_string(max_threads) + " threads");
  try {
    return std::unique_ptr<device>(new device(threads, host_adapter(threads)));
  } catch (const std::system_error& e) {
    return make_error(errc::unavailable,
                      "cpu: could not start " + std::to_string(threads) + " threads: " + std::string(e.what()),
                      "lower ROSTER_CPU_THREADS, or raise the process's thread limit (ulimit -u)");
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, "cpu: out of memory while opening the device",
                      "free memory or lower ROSTER_CPU_THREADS");
  }
}

ROSTER_INLINE void* device::data_of(const buffer& b) const noexcept {
  if (b.slot >= memory_.size()) return nullptr;
  const memory& m = memory_[b.slot];
  return m.data != nullptr && m.type == b.type && m.size == b.size ? m.data : nullptr;
}

ROSTER_INLINE const void* device::address(const buffer& b) const noexcept {
  if (b.owner != id()) return nullptr;
  std::lock_guard lock(mutex_);
  return data_of(b);
}

ROSTER_INLINE bool device::owns(const buffer& b) const noexcept {
  std::lock_guard lock(mutex_);
  return data_of(b) != nullptr;
}

ROSTER_INLINE expected<std::uint32_t> device::do_allocate(element_type t, std::size_t n) {
  const std::size_t esize = size_of(t);
  const std::size_t bytes = (n * esize + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
  void* p = ::operator new(bytes, std::align_val_t{buffer_alignment}, std::nothrow);
  if (p == nullptr)
    return make_error(errc::out_of_memory,
                      "cpu: allocate: no memory for " + std::to_string(n) + " " + std::string(to_string(t)) +
                          " elements (" + std::to_string(bytes) + " bytes)",
                      "free buffers you no longer need, or allocate fewer elements");
  // First touch: zero the pages with the threads and the partition that will
  // compute on them, so each page lands on the NUMA node of its thread.
  const std::size_t blocks = (n + block_elements - 1) / block_elements;
  const unsigned threads = pool_.size();
  auto touch = [&](unsigned th) noexcept {
    const std::size_t lo = detail::cpu_block_begin(blocks, th, threads) * block_elements;
    const std::size_t hi = std::min(n, detail::cpu_block_begin(blocks, th + 1, threads) * block_elements);
    if (lo < hi) std::memset(static_cast<char*>(p) + lo * esize, 0, (hi - lo) * esize);
  };
  std::lock_guard lock(mutex_);
  if (memory_.size() >= 0xffffffffu) {
    ::operator delete(p, std::align_val_t{buffer_alignment});
    return make_error(errc::out_of_memory, "cpu: allocate: the device has handed out 2^32 - 1 buffers",
                      "open a new device with roster::acquire(\"cpu\")");
  }
  try {
    memory_.push_back({nullptr, t, n});
  } catch (const std::bad_alloc&) {
    ::operator delete(p, std::align_val_t{buffer_alignment});
    return make_error(errc::out_of_memory, "cpu: allocate: no memory for the buffer table",
                      "free memory, or release buffers you no longer need");
  }
  pool_.run_each(touch);
  memory_.back().data = p;
  return static_cast<std::uint32_t>(memory_.size() - 1);
}

ROSTER_INLINE expected<void> device::do_release(std::uint32_t slot) {
  std::lock_guard lock(mutex_);
  memory& m = memory_[slot];
  ::operator delete(m.data, std::align_val_t{buffer_alignment});
  m.data = nullptr;
  return {};
}

ROSTER_INLINE expected<void> device::do_upload(const buffer& b, const void* src) {
  std::lock_guard lock(mutex_);
  char* dst = static_cast<char*>(data_of(b));
  const std::size_t esize = size_of(b.type), blocks = (b.size + block_elements - 1) / block_elements;
  const unsigned threads = pool_.size();
  auto part = [&](unsigned th) noexcept {
    const std::size_t lo = detail::cpu_block_begin(blocks, th, threads) * block_elements;
    const std::size_t hi = std::min(b.size, detail::cpu_block_begin(blocks, th + 1, threads) * block_elements);
    if (lo < hi) std::memcpy(dst + lo * esize, static_cast<const char*>(src) + lo * esize, (hi - lo) * esize);
  };
  pool_.run_each(part);
  return {};
}

ROSTER_INLINE expected<void> device::do_download(const buffer& b, void* dst) {
  std::lock_guard lock(mutex_);
  const char* from = static_cast<const char*>(data_of(b));
  const std::size_t esize = size_of(b.type), blocks = (b.size + block_elements - 1) / block_elements;
  const unsigned threads = pool_.size();
  auto part = [&](unsigned th) noexcept {
    const std::size_t lo = detail::cpu_block_begin(blocks, th, threads) * block_elements;
    const std::size_t hi = std::min(b.size, detail::cpu_block_begin(blocks, th + 1, threads) * block_elements);
    if (lo < hi) std::memcpy(static_cast<char*>(dst) + lo * esize, from + lo * esize, (hi - lo) * esize);
  };
  pool_.run_each(part);
  return {};
}

ROSTER_INLINE expected<bool> device::do_native(std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  *static_cast<native*>(out) = native{this, pool_.size()};
  return true;
}

ROSTER_INLINE expected<bool> device::do_native_buffer(const buffer& b, std::uint64_t kind, void* out) {
  if (kind != native::native_id) return false;
  std::lock_guard lock(mutex_);
  void* data = data_of(b);
  if (data == nullptr)
    return make_error(errc::invalid_argument, "the buffer was released", "allocate a new buffer");
  *static_cast<native::buffer*>(out) = native::buffer{data, b.type, b.size};
  return true;
}

ROSTER_INLINE void native::barrier() const noexcept { dev->pool_.barrier().arrive_and_wait(); }

ROSTER_INLINE expected<void> device::run_on_threads(thread_fn fn, void* context) {
  // The dispatch lock: a dispatch returns only when its work is done, so the
  // user's work runs after every earlier dispatch and before any later one.
  std::lock_guard lock(mutex_);
  const unsigned threads = pool_.size();
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  unsigned first_thread = 0;
  auto job = [&](unsigned t) noexcept {
    try {
      fn(context, t, threads);
    } catch (...) {
      if (!failed.exchange(true, std::memory_order_acq_rel)) {
        first = std::current_exception();
        first_thread = t;
      }
    }
  };
  pool_.run_each(job);
  if (!failed.load(std::memory_order_acquire)) return {};
  std::string what = "an exception";
  try {
    std::rethrow_exception(first);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  return make_error(errc::internal,
                    "cpu: run_on_threads: the callable threw on thread " + std::to_string(first_thread) + ": " + what,
                    "catch exceptions inside the callable (a thread that throws skips the barriers the others wait at)");
}

template <class T>
expected<void> device::run(std::span<const step> steps) {
  detail::cpu_plan<T> plan;
  const unsigned threads = pool_.size();
  plan.threads = threads;
  plan.barrier = &pool_.barrier();
  plan.wide = wide_loops_;
  plan.steps.reserve(steps.size());
  std::size_t dots = 0;
  detail::cpu_segment<T> seg;
  auto close = [&] {
    if (seg.count > 0) plan.segments.push_back(seg);
    seg = {};
    seg.first = plan.steps.size();
  };
  for (const step& s : steps) {
    if (s.op == op::grid_sync) {
      close();
      continue;
    }
    detail::cpu_step<T> r{s.op, nullptr, nullptr, nullptr, static_cast<T>(s.scalar), s.out.size, 0};
    r.out = static_cast<T*>(data_of(s.out));
    if (buffers_of(s.op) > 1) r.in1 = static_cast<const T*>(data_of(s.in1));
    if (buffers_of(s.op) > 2) r.in2 = static_cast<const T*>(data_of(s.in2));
    if (r.out == nullptr || (buffers_of(s.op) > 1 && r.in1 == nullptr) || (buffers_of(s.op) > 2 && r.in2 == nullptr))
      return make_error(errc::invalid_argument, "cpu: dispatch: a step names a buffer that is not live on this device",
                        "dispatch through device::dispatch(program), which checks every buffer");
    if (s.op == op::dot) {
      r.n = s.in1.size;
      r.partial = dots++;
      ++seg.dots;
    }
    seg.length = std::max(seg.length, r.n);
    plan.steps.push_back(r);
    ++seg.count;
  }
  close();
  for (auto& g : plan.segments) {
    if (g.count != 1 || !detail::cpu_has_streaming) continue;
    const auto& st = plan.steps[g.first];
    const std::size_t arrays = st.kind == op::fill ? 1 : (st.kind == op::copy || st.kind == op::mul) ? 2 : 3;
    g.streaming = arrays * st.n * sizeof(T) > streaming_threshold_;
  }
  // Partials: one run of `threads` doubles per dot step, padded to a cache line.
  plan.stride = (threads + 7) / 8 * 8;
  partials_.assign(dots * plan.stride, 0.0);
  plan.partials = partials_.data();
  pool_.run_each(plan);
  return {};
}

ROSTER_INLINE expected<void> device::run_builtin(std::span<const step> steps) {
  for (const step& s : steps)
    if (buffers_of(s.op) > 0) return s.out.type == element_type::f32 ? run<float>(steps) : run<double>(steps);
  return {};
}

// A user kernel: each pool thread runs its contiguous part of [0, extent);
// the pool's run returns when every thread is done, which orders the call
// with the steps before and after it.
ROSTER_INLINE expected<void> device::run_call(const kernel_call& c) {
  auto entry = kernel_for(c);  // the named variant, the recorded winner, or the default
  if (!entry) return std::move(entry).error().prepend(adapter_.spec() + ": dispatch");
  // A built-in entry over its whole buffers: the fused path's loop for it.
  if (const step b = builtin_step(**entry, c); b.op != op::call) return run_builtin(std::span<const step>(&b, 1));
  const host_kernel* k = (*entry)->payload_as<host_kernel>();
  if (k == nullptr || k->fn == nullptr)
    return make_error(errc::internal,
                      adapter_.spec() + ": dispatch: the cpu kernel '" + c.op + "' (variant '" +
                          std::string((*entry)->variant) + "') has no host entry point",
                      "register it with roster::cpu::kernel or ROSTER_CPU_KERNEL, which set the function");
  call_arguments arguments;  // no allocation for a call of up to 16 buffers and 16 scalars
  auto args = arguments.build(**entry, c, [&](const buffer& b) { return data_of(b); });
  if (!args) return std::move(args).error().prepend(adapter_.spec() + ": dispatch");
  const host_kernel_fn fn = k->fn;
  const std::size_t n = args->extent;
  const unsigned threads = pool_.size();
  auto part = [&](unsigned t) noexcept {
    const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    if (lo < hi) fn(*args, lo, hi);
  };
  pool_.run_each(part);
  return {};
}

ROSTER_INLINE expected<void> device::dispatch_steps(std::span<const step> steps) {
  if (steps.empty()) return {};
  std::lock_guard lock(mutex_);
  try {
    std::size_t first_call = 0;
    while (first_call < steps.size() && steps[first_call].op != op::call) ++first_call;
    if (first_call == steps.size()) return run_builtin(steps);  // no user kernel: the fused path as it was
    // Built-in runs between calls go through the fused path; each call runs
    // on the pool alone. Each part completes before the next starts.
    std::size_t begin = 0;
    for (std::size_t i = first_call; i <= steps.size(); ++i) {
      if (i < steps.size() && steps[i].op != op::call) continue;
      if (i > begin)
        if (auto ok = run_builtin(steps.subspan(begin, i - begin)); !ok) return ok;
      if (i < steps.size())
        if (auto ok = run_call(*steps[i].call); !ok) return ok;
      begin = i + 1;
    }
    return {};
  } catch (const std::bad_alloc&) {
    return make_error(errc::out_of_memory, "cpu: dispatch: no memory for the program's plan",
                      "free memory, or dispatch a shorter program");
  }
  return {};
}

ROSTER_INLINE expected<std::unique_ptr<device>> backend::open(open_key, std::uint32_t ordinal) {
  if (ordinal != 0)
    return make_error(errc::not_found, "cpu:" + std::to_string(ordinal) + ": the CPU backend has one adapter, cpu:0",
                      "use the spec 'cpu' or 'cpu:0'");
  auto threads = thread_count();
  if (!threads) return std::move(threads).error();
  return device::open(*threads);
}

ROSTER_INLINE expected<std::vector<adapter_info>> backend::enumerate() {
  auto threads = thread_count();
  if (!threads) return std::move(threads).error();
  std::vector<adapter_info> out;
  out.push_back(host_adapter(*threads));
  return out;
}

}  // namespace roster::cpu
