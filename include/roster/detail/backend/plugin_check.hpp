#pragma once
// Private: recognising a roster plugin from its file, before dlopen runs any
// of its code. Plain inline functions, so a test or fuzz target may include
// it beside the compiled library (start-up code of a stranger's library may end the process, as
// libasan.so does). Reads the ELF header and section headers with bounded
// reads and looks for the plugin_note section ROSTER_REGISTER_BACKEND emits.

#include <roster/detail/base/plugin_note.hpp>
#include <roster/error.hpp>

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace roster::detail {

#if defined(__x86_64__)
inline constexpr int plugin_machine = EM_X86_64;
#elif defined(__aarch64__)
inline constexpr int plugin_machine = EM_AARCH64;
#elif defined(__powerpc64__)
inline constexpr int plugin_machine = EM_PPC64;
#elif defined(__riscv)
inline constexpr int plugin_machine = EM_RISCV;
#else
inline constexpr int plugin_machine = -1;  // not checked
#endif

// The name of the first defined STB_GNU_UNIQUE symbol of a dynamic symbol
// table, or empty (none, or a table over 16 MiB, which is not read).
template <class SectionHeaders, class ReadAt>
std::string first_unique_symbol(const SectionHeaders& sh, ReadAt& read_at) {
  using sym_t = std::conditional_t<sizeof(void*) == 8, Elf64_Sym, Elf32_Sym>;
  constexpr std::uint64_t most = std::uint64_t{1} << 24;
  for (const auto& [s] : sh) {
    if (s.sh_type != SHT_DYNSYM || s.sh_link >= sh.size() || s.sh_size > most) continue;
    const auto& strings = sh[s.sh_link].h;
    if (strings.sh_size > most) continue;
    struct symbol {  // named, as section_header is
      sym_t y;
    };
    std::vector<symbol> symbols(s.sh_size / sizeof(sym_t));
    std::string names(strings.sh_size, '\0');
    if (!read_at(s.sh_offset, symbols.size() * sizeof(sym_t), symbols.data()) ||
        !read_at(strings.sh_offset, strings.sh_size, names.data()))
      continue;
    for (const auto& [y] : symbols) {
      const unsigned bind = sizeof(void*) == 8 ? ELF64_ST_BIND(y.st_info) : ELF32_ST_BIND(y.st_info);
      if (bind != STB_GNU_UNIQUE || y.st_shndx == SHN_UNDEF || y.st_name >= names.size()) continue;
      return std::string(names.data() + y.st_name, ::strnlen(names.data() + y.st_name, names.size() - y.st_name));
    }
  }
  return {};
}

// Returns the plugin ABI a shared object's file declares, or why it is not a
// roster plugin for this process; `size` is the file's size in bytes. When
// `unique` is given, it receives the name of the first STB_GNU_UNIQUE symbol
// the plugin defines (empty when none): glibc never unloads a module that
// holds one, and GCC makes every inline variable and every static of an
// inline function one unless built with -fno-gnu-unique.
inline expected<std::uint32_t> check_plugin_fd(int fd, std::uint64_t size, std::string_view shown,
                                               std::string* unique = nullptr) {
  using ehdr_t = std::conditional_t<sizeof(void*) == 8, Elf64_Ehdr, Elf32_Ehdr>;
  using shdr_t = std::conditional_t<sizeof(void*) == 8, Elf64_Shdr, Elf32_Shdr>;
  const std::string who = "plugin '" + std::string(shown) + "'";
  auto refuse = [&](std::string why) {
    return make_error(errc::invalid_argument, who + " is not a roster plugin: " + why,
                      "leave its folder out of ROSTER_PLUGIN_PATH, or rebuild the plugin against this roster (a "
                      "backend plugin registers with ROSTER_REGISTER_BACKEND)");
  };
  // Reads exactly n bytes at off, within the file.
  auto read_at = [&](std::uint64_t off, std::uint64_t n, void* out) {
    if (off > size || n > size - off) return false;
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(off));
      if (got <= 0) return false;
      p += got, off += static_cast<std::uint64_t>(got), n -= static_cast<std::uint64_t>(got);
    }
    return true;
  };
  ehdr_t eh{};
  if (!read_at(0, sizeof eh, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return refuse("not an ELF file");
  if (eh.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32))
    return refuse("an ELF file of another word size than this process");
  const bool little = std::endian::native == std::endian::little;
  if (eh.e_ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB)) return refuse("an ELF file of another byte order");
  if (eh.e_type != ET_DYN) return refuse("an ELF file that is not a shared object");
  if (plugin_machine >= 0 && eh.e_machine != plugin_machine) return refuse("a shared object for another machine");
  if (eh.e_shoff == 0 || eh.e_shnum == 0 || eh.e_shentsize != sizeof(shdr_t))
    return refuse("a shared object without section headers");
  // e_shnum < 0xff00 (SHN_LORESERVE): at most 4 MiB of headers, and all in the file.
  // A named wrapper: nvcc's front end crashes destroying a vector of the
  // unnamed structs <elf.h> declares.
  struct section_header {
    shdr_t h;
  };
  static_assert(sizeof(section_header) == sizeof(shdr_t));
  std::vector<section_header> sh(eh.e_shnum);
  if (!read_at(eh.e_shoff, std::uint64_t{eh.e_shnum} * sizeof(shdr_t), sh.data()))
    return refuse("its section headers lie past the end of the file");
  std::size_t names_index = eh.e_shstrndx;
  if (names_index == SHN_XINDEX) names_index = sh[0].h.sh_link;
  if (names_index == SHN_UNDEF || names_index >= sh.size()) return refuse("it has no section name table");
  const shdr_t& names_sh = sh[names_index].h;
  if (names_sh.sh_size > (std::uint64_t{1} << 24)) return refuse("its section name table is over 16 MiB");
  std::string names(names_sh.sh_size, '\0');
  if (!read_at(names_sh.sh_offset, names_sh.sh_size, names.data()))
    return refuse("its section name table lies past the end of the file");
  const std::string_view wanted(plugin_note_section);
  for (const auto& [s] : sh) {
    if (s.sh_name >= names.size()) continue;
    const char* name = names.data() + s.sh_name;
    if (::strnlen(name, names.size() - s.sh_name) != wanted.size() || wanted != std::string_view(name, wanted.size()))
      continue;
    if (s.sh_type != SHT_PROGBITS || s.sh_size == 0 || s.sh_size % sizeof(plugin_note) != 0 ||
        s.sh_size > 4096 * sizeof(plugin_note))
      return refuse("its " + std::string(wanted) + " section is malformed");
    std::vector<plugin_note> notes(s.sh_size / sizeof(plugin_note));
    if (!read_at(s.sh_offset, s.sh_size, notes.data()))
      return refuse("its " + std::string(wanted) + " section lies past the end of the file");
    for (const plugin_note& n : notes) {
      if (std::memcmp(n.magic, plugin_note_magic, sizeof n.magic) != 0 || n.size != sizeof(plugin_note))
        return refuse("its " + std::string(wanted) + " section is malformed");
      if (n.abi != plugin_abi_version)
        return make_error(errc::unsupported,
                          who + " was built for roster plugin ABI " + std::to_string(n.abi) +
                              ", and this roster speaks ABI " + std::to_string(plugin_abi_version),
                          "rebuild the plugin against this roster's headers");
    }
    if (unique != nullptr) *unique = first_unique_symbol(sh, read_at);
    return plugin_abi_version;
  }
  return refuse("it has no " + std::string(wanted) + " section (no backend registered with ROSTER_REGISTER_BACKEND)");
}

// Opens a file without blocking (a FIFO never hangs) and checks it as above.
inline expected<std::uint32_t> check_plugin_file(const std::string& path, std::string* unique = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return make_error(errc::io, "plugin '" + path + "': cannot open it: " + std::strerror(errno),
                      "make the file readable, or leave its folder out of ROSTER_PLUGIN_PATH");
  struct stat st {};
  expected<std::uint32_t> r = make_error(errc::invalid_argument, "plugin '" + path + "' is not a regular file",
                                         "leave its folder out of ROSTER_PLUGIN_PATH");
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    r = check_plugin_fd(fd, static_cast<std::uint64_t>(st.st_size), path, unique);
  ::close(fd);
  return r;
}

}  // namespace roster::detail
