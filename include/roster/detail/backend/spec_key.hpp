#pragma once
// Private: the keys of the device cache's hit path. An allocation-free
// normalizer that agrees with parse_spec wherever it answers (byte-parallel,
// eight characters at a time), and the loading and hashing of a spelling as
// whole words. fuzz/spec.cpp checks the agreement.

#include <roster/detail/base/text.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace roster::detail {

// Room for a normalized spec on the hit path's stack, padded to whole 8-byte
// words; a spec with a longer type still works, through parse_spec.
inline constexpr std::size_t spec_key_capacity = 72;
inline constexpr std::size_t spec_type_max = 48;

// Byte-parallel tests on eight ASCII characters at once (each result byte is
// 0x80 where the test holds, 0 elsewhere).
inline constexpr std::uint64_t swar_ones = 0x0101010101010101ull;
inline constexpr std::uint64_t swar_highs = 0x8080808080808080ull;
// Bytes >= c, for bytes below 0x80 and c <= 0x80.
constexpr std::uint64_t swar_ge(std::uint64_t x, unsigned c) noexcept { return (x + (0x80u - c) * swar_ones) & swar_highs; }
// Bytes == c.
constexpr std::uint64_t swar_eq(std::uint64_t x, unsigned c) noexcept {
  const std::uint64_t y = x ^ (c * swar_ones);
  return ~(((y & ~swar_highs) + ~swar_highs) | y) & swar_highs;
}

// Writes the normalized spec ("cuda:1") into out without allocating, zero
// pads it to a whole word, and returns its length; returns 0 for anything it
// does not handle (a malformed spec, a non-ASCII type, a type past
// spec_type_max, a text past 63 characters), which the caller then gives to
// parse_spec. Where it answers, it agrees with parse_spec(text)->str(). The
// type is lowered and checked eight characters at a time.
[[gnu::always_inline]] inline std::size_t normalize_spec_into(std::string_view text,
                                                              char (&out)[spec_key_capacity]) noexcept {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p != end && is_space(*p)) ++p;
  while (p != end && is_space(end[-1])) --end;
  const std::size_t len = static_cast<std::size_t>(end - p);
  if (len == 0 || len + 8 > spec_key_capacity) return 0;
  std::memcpy(out, p, len);
  std::memset(out + len, 0, 8);

  std::size_t n_type = len;
  for (std::size_t w = 0; w < len; w += 8) {
    std::uint64_t x;
    std::memcpy(&x, out + w, 8);
    if (const std::uint64_t colon = swar_eq(x, ':'); colon != 0) {
      n_type = w + static_cast<std::size_t>(__builtin_ctzll(colon)) / 8;
      break;
    }
  }
  if (n_type == 0 || n_type > spec_type_max) return 0;
  std::uint64_t bad = 0;
  for (std::size_t w = 0; w < n_type; w += 8) {
    std::uint64_t x;
    std::memcpy(&x, out + w, 8);
    const std::size_t r = n_type - w;
    const std::uint64_t in_type = r >= 8 ? swar_highs : swar_highs & ((std::uint64_t{1} << (8 * r)) - 1);
    bad |= x & in_type;  // not ASCII
    x |= (swar_ge(x, 'A') & ~swar_ge(x, 'Z' + 1)) >> 2;  // lower case: + 0x20
    const std::uint64_t ok = (swar_ge(x, 'a') & ~swar_ge(x, 'z' + 1)) | (swar_ge(x, '0') & ~swar_ge(x, '9' + 1)) |
                             swar_eq(x, '_') | swar_eq(x, '-');
    bad |= ~ok & in_type;
    std::memcpy(out + w, &x, 8);  // bytes past the type are not letters unless the spec is bad
  }
  if (bad != 0) return 0;

  std::size_t n = n_type + 1;
  if (n_type == len) {
    out[n_type] = ':';
    out[n++] = '0';
  } else {
    const char* d = out + n_type + 1;
    const char* d_end = out + len;
    if (d == d_end) return 0;
    unsigned char not_digit = 0;
    for (const char* q = d; q != d_end; ++q) not_digit |= static_cast<unsigned char>(static_cast<unsigned char>(*q - '0') > 9);
    if (not_digit != 0) return 0;
    while (d_end - d > 1 && *d == '0') ++d;  // leading zeros
    const std::size_t digits = static_cast<std::size_t>(d_end - d);
    if (digits > 10 || (digits == 10 && std::string_view(d, 10) > "2147483647")) return 0;
    for (std::size_t i = 0; i < digits; ++i) out[n + i] = d[i];  // moves down over leading zeros
    n += digits;
  }
  std::memset(out + n, 0, 8);
  return n;
}

// Most words in a spelling the hit path looks up: texts of up to 64 characters.
inline constexpr std::size_t spelling_words = 8;

// Loads text (at most 64 characters) as little-endian words, the last one zero
// padded, without reading past its end; returns the number of words.
[[gnu::always_inline]] inline std::size_t load_spelling(std::string_view text,
                                                        std::uint64_t (&w)[spelling_words]) noexcept {
  const char* p = text.data();
  const std::size_t n = text.size();
  const std::size_t full = n / 8;
  const std::size_t rem = n % 8;
  if constexpr (std::endian::native == std::endian::little) {
    // Unrolled on purpose: GCC turns a loop of word copies into `rep movsq`,
    // which costs more than the rest of a cache hit on some Xeons.
    if (full > 0) std::memcpy(&w[0], p, 8);
    if (full > 1) std::memcpy(&w[1], p + 8, 8);
    if (full > 2) std::memcpy(&w[2], p + 16, 8);
    if (full > 3) std::memcpy(&w[3], p + 24, 8);
    if (full > 4) std::memcpy(&w[4], p + 32, 8);
    if (full > 5) std::memcpy(&w[5], p + 40, 8);
    if (full > 6) std::memcpy(&w[6], p + 48, 8);
    if (full > 7) std::memcpy(&w[7], p + 56, 8);
    if (rem != 0) {
      std::uint64_t last;
      if (n >= 8) {  // the eight bytes ending at the end, shifted down
        std::memcpy(&last, p + n - 8, 8);
        last >>= (8 - rem) * 8;
      } else if (n >= 4) {  // two overlapping four-byte loads
        std::uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        last = lo | (static_cast<std::uint64_t>(hi) << ((n - 4) * 8));
      } else {
        last = static_cast<unsigned char>(p[0]);
        if (n > 1) last |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[1])) << 8;
        if (n > 2) last |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[2])) << 16;
      }
      w[full] = last;
    }
  } else {
    for (std::size_t i = 0; i < full + (rem != 0); ++i) {
      std::uint64_t v = 0;
      for (std::size_t b = 0; b < 8 && 8 * i + b < n; ++b)
        v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[8 * i + b])) << (8 * b);
      w[i] = v;
    }
  }
  return full + (rem != 0);
}

// Hashes the words of a spelling of n characters. The words are multiplied
// independently (no chain from one word to the next), so a short spec hashes
// in a few cycles.
[[gnu::always_inline]] inline std::uint64_t spelling_hash(const std::uint64_t* w, std::size_t words,
                                                          std::size_t n) noexcept {
  std::uint64_t h = n * 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < words; ++i) h += (w[i] ^ (0x243f6a8885a308d3ull * (i + 1))) * 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

}  // namespace roster::detail
