#pragma once
// Private: the CPU device's buffer table. A buffer handle's slot holds an
// index into the table (low 20 bits) and the generation of that index (high
// 12 bits). Releasing a buffer frees its index for the next allocation and
// advances the index's generation, so the table never grows past the most
// buffers live at once, and the released handle, whose generation is now
// old, never matches again. An index whose generation would wrap is retired
// for good instead of reused (one entry per 4096 reuses): a stale handle can
// never come back to life, at the price of 2^32 allocations per device.

#include <roster/program.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace roster::cpu::detail {

inline constexpr unsigned slot_index_bits = 20;
inline constexpr std::uint32_t slot_index_mask = (std::uint32_t{1} << slot_index_bits) - 1;
/// Buffers one device can hold at once.
inline constexpr std::size_t max_live_buffers = std::size_t{1} << slot_index_bits;
/// Generations of one index before it is retired.
inline constexpr std::uint32_t slot_generations = std::uint32_t{1} << (32 - slot_index_bits);

/// Buffer memory as the table keeps it: data is null while the slot is free.
struct cpu_memory {
  void* data = nullptr;
  element_type type = element_type::f64;
  std::size_t size = 0;
};

class cpu_slots {
 public:
  /// Returns the live entry a handle names, or null (never allocated,
  /// released, or of an older generation).
  [[nodiscard]] const cpu_memory* find(std::uint32_t handle) const noexcept {
    const std::uint32_t index = handle & slot_index_mask;
    if (index >= cells_.size()) return nullptr;
    const cell& c = cells_[index];
    return c.generation == (handle >> slot_index_bits) && c.memory.data != nullptr ? &c.memory : nullptr;
  }
  /// Stores a live entry and returns its handle; false when every index is
  /// live or retired. Throws std::bad_alloc when the table cannot grow.
  [[nodiscard]] bool insert(const cpu_memory& m, std::uint32_t& handle) {
    std::uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else if (cells_.size() < max_live_buffers) {
      // free_ can hold every index, so erase never allocates.
      if (free_.capacity() < cells_.size() + 1) free_.reserve(std::max(cells_.size() + 1, 2 * free_.capacity()));
      cells_.push_back({});
      index = static_cast<std::uint32_t>(cells_.size() - 1);
    } else {
      return false;
    }
    cells_[index].memory = m;
    handle = index | (cells_[index].generation << slot_index_bits);
    return true;
  }
  /// Frees a live handle's entry and returns its memory; the handle never
  /// matches again. Never allocates.
  cpu_memory erase(std::uint32_t handle) noexcept {
    cell& c = cells_[handle & slot_index_mask];
    const cpu_memory m = c.memory;
    c.memory = {};
    if (++c.generation < slot_generations) free_.push_back(handle & slot_index_mask);  // else retired
    return m;
  }
  /// Calls f on every live entry (the destructor frees them).
  template <class F>
  void for_each_live(F&& f) const {
    for (const cell& c : cells_)
      if (c.memory.data != nullptr) f(c.memory);
  }
  /// Returns the number of entries the table holds (live, free and retired).
  [[nodiscard]] std::size_t capacity() const noexcept { return cells_.size(); }

 private:
  struct cell {
    cpu_memory memory;
    std::uint32_t generation = 0;
  };
  std::vector<cell> cells_;
  std::vector<std::uint32_t> free_;
};

}  // namespace roster::cpu::detail
