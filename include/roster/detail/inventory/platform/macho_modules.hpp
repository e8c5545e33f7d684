#pragma once
// Private: the Mach-O module walk (the section and the descriptor are in
// macho.hpp). Included by the inventory's out-of-line code only. Compiled in
// roster's tests against declarations of the SDK's functions
// (tests/inventory/macho/sdk), linked and inspected; never run.
//
// The first collection asks dyld to report images: dyld calls back at once
// for every image already loaded (the main executable first), then for each
// one dlopen adds, and before dlclose removes one. The callbacks keep the
// hub's module list, so a collection calls nothing of dyld's and the rank of
// a module is the order dyld reported it in. The remove callback takes the
// hub's mutex, which holds the unmapping back until no collection reads the
// image. The callbacks cannot be withdrawn: they live in the module that
// holds the hub (libroster, or the executable header-only).

#include <roster/detail/inventory/inventory_hub_state.hpp>
#include <roster/detail/inventory/platform/macho.hpp>
#include <roster/detail/inventory/platform/posix_modules.hpp>

#include <dlfcn.h>
#include <mach-o/dyld.h>
#include <mach-o/getsect.h>
#include <mach-o/loader.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

namespace roster::detail {

/// Returns the descriptor of an image, or null when it carries no inventory.
inline const module_descriptor* macho_descriptor(const mach_header* image) noexcept {
  unsigned long size = 0;
  const auto* data = getsectiondata(reinterpret_cast<const mach_header_64*>(image), "__DATA", "__roster_mod", &size);
  if (data == nullptr || size < sizeof(module_descriptor)) return nullptr;
  const auto* d = reinterpret_cast<const module_descriptor*>(data);
  return d->magic == module_descriptor::expected && d->version >= 1 ? d : nullptr;
}

inline void macho_image_added(const mach_header* image, std::intptr_t) noexcept {
  const module_descriptor* d = macho_descriptor(image);
  if (d == nullptr) return;
  {
    auto& h = the_hub();
    std::lock_guard lock(h.mutex);
    if (h.list == nullptr) {
      h.list = h.inline_list;
      h.capacity = hub::inline_modules;
    }
    if (h.count == h.capacity) {
      auto* bigger = static_cast<module_entry*>(::operator new(h.capacity * 2 * sizeof(module_entry), std::nothrow));
      if (bigger == nullptr) return;  // out of memory: this image stays unseen
      std::memcpy(static_cast<void*>(bigger), h.list, h.count * sizeof(module_entry));
      if (h.list != h.inline_list) ::operator delete(h.list);
      h.list = bigger;
      h.capacity *= 2;
    }
    h.list[h.count++] = module_entry{d->begin, d->end, d->node, reinterpret_cast<std::uintptr_t>(image), nullptr};
  }
  module_event(*d->node, module_change::loaded);
}

inline void macho_image_removed(const mach_header* image, std::intptr_t) noexcept {
  const module_descriptor* d = macho_descriptor(image);
  if (d == nullptr) return;
  module_event(*d->node, module_change::unloading);
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  for (std::size_t i = 0; i < h.count; ++i)
    if (h.list[i].node == d->node) {
      std::memmove(static_cast<void*>(h.list + i), h.list + i + 1, (h.count - i - 1) * sizeof(module_entry));
      --h.count;
      break;
    }
}

/// Brings the hub's module list up to date: dyld's callbacks keep it so.
inline bool refresh_modules(hub& h) noexcept {
  h.known = true;
  return true;
}

/// Notes a module's event; called with the hub locked: the callbacks keep
/// the list.
inline void module_loaded(hub&, module_node&) noexcept {}
inline void module_unloading(hub&, module_node&) noexcept {}

/// Returns the node of the image behind a dlopen handle, or null. A handle
/// is opaque on macOS, but dlopen(path, RTLD_NOLOAD) of an image returns the
/// handle it has. Not under the hub's lock: dlopen takes dyld's, under which
/// the callbacks wait for the hub's.
inline module_node* module_of_handle(hub& h, void* handle) noexcept {
  for (std::size_t i = 0;; ++i) {
    module_entry e;
    {
      std::lock_guard lock(h.mutex);
      if (i >= h.count) return nullptr;
      e = h.list[i];
    }
    Dl_info where{};
    if (dladdr(reinterpret_cast<const void*>(e.base), &where) == 0 || where.dli_fname == nullptr) continue;
    void* same = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (same == nullptr) continue;
    dlclose(same);
    if (same == handle) return e.node;
  }
}

/// Asks dyld for its callbacks, once; before a collection takes the hub's
/// lock, since dyld calls back at once for the images already loaded.
inline void prepare_module_walk(hub& h) noexcept {
  std::lock_guard lock(h.registry.watch);
  if (h.registry.watching) return;
  _dyld_register_func_for_add_image(&macho_image_added);
  _dyld_register_func_for_remove_image(&macho_image_removed);
  h.registry.watching = true;
}

}  // namespace roster::detail
