// One way for every enum to become text and back: a table of {value, text} pairs per enum, read by
// enum_text (value to text) and enum_parse (text to value, nullopt for text the table lacks). A
// value's first row is its text; later rows for the same value are other spellings parse accepts.
// The texts are stored in run databases and JSON, so a table's first rows never change. A table
// sits in its enum's .cpp, or in its header where other code names the choices in a message
// (enum_unknown).
//
//   constexpr EnumText<Color> kColorTexts[] = {{Color::kRed, "red"}, {Color::kGreen, "green"}};
//   const char* to_string(Color c) { return enum_text(kColorTexts, c); }
//   std::optional<Color> parse_color(std::string_view s) { return enum_parse(kColorTexts, s); }
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kevo {

template <typename E>
struct EnumText {
  E value;
  const char* text;
};

// The text of `e`: its first row; `missing` when the table has none (a value cast from a number).
template <typename E, size_t N>
constexpr const char* enum_text(const EnumText<E> (&table)[N], E e, const char* missing = "?") {
  for (const auto& row : table)
    if (row.value == e) return row.text;
  return missing;
}

// The value whose row holds exactly `text`; nullopt when none does.
template <typename E, size_t N>
constexpr std::optional<E> enum_parse(const EnumText<E> (&table)[N], std::string_view text) {
  for (const auto& row : table)
    if (text == row.text) return row.value;
  return std::nullopt;
}

// Row i is its value's first row (its text, not another spelling).
template <typename E, size_t N>
constexpr bool enum_first_row(const EnumText<E> (&table)[N], size_t i) {
  for (size_t j = 0; j < i; ++j)
    if (table[j].value == table[i].value) return false;
  return true;
}

// Every value's text in table order, for messages: "a, b, c".
template <typename E, size_t N>
std::string enum_choices(const EnumText<E> (&table)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (!enum_first_row(table, i)) continue;
    if (!out.empty()) out += ", ";
    out += table[i].text;
  }
  return out;
}

// The message for text no row holds: "unknown WHAT 'TEXT' (a, b, c)".
template <typename E, size_t N>
std::string enum_unknown(const EnumText<E> (&table)[N], std::string_view what, std::string_view text) {
  return "unknown " + std::string(what) + " '" + std::string(text) + "' (" + enum_choices(table) + ")";
}

}  // namespace kevo
