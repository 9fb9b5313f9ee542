#include "check/intake.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "compile/source_text.h"
#include "util/enum_text.h"
#include "util/fs.h"

namespace kevo {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Offsets of `kevo_forward ( params ) ... {`: definitions, not declarations or uses. The scans are
// bounded so a source made of repeated "kevo_forward(" stays linear.
std::vector<size_t> forward_definitions(const std::string& code) {
  constexpr std::string_view kName = "kevo_forward";
  constexpr size_t kMaxParams = 4096, kMaxBetween = 256;
  std::vector<size_t> defs;
  for (size_t p = code.find(kName); p != std::string::npos; p = code.find(kName, p + 1)) {
    const size_t end = p + kName.size();
    if ((p > 0 && ident_char(code[p - 1])) || (end < code.size() && ident_char(code[end]))) continue;
    size_t i = end;
    while (i < code.size() && std::isspace(static_cast<unsigned char>(code[i]))) ++i;
    if (i >= code.size() || code[i] != '(') continue;
    int depth = 0;
    size_t close = std::string::npos;
    for (size_t j = i; j < code.size() && j < i + kMaxParams; ++j) {
      if (code[j] == '(') ++depth;
      if (code[j] == ')' && --depth == 0) {
        close = j;
        break;
      }
    }
    if (close == std::string::npos) continue;
    // Qualifiers and attributes may stand between ")" and "{" (noexcept, __attribute__(...)).
    for (size_t j = close + 1; j < code.size() && j < close + kMaxBetween; ++j) {
      if (code[j] == ';' || code[j] == ',' || code[j] == '=' || code[j] == '}') break;
      if (code[j] == '{') {
        defs.push_back(p);
        break;
      }
    }
  }
  return defs;
}

int line_of(std::string_view s, size_t off) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + std::min(off, s.size()), '\n'));
}

std::string mib(uint64_t n) { return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1 << 20)); }

}  // namespace

namespace {

constexpr EnumText<IntakeCode> kIntakeCodeTexts[] = {
    {IntakeCode::TooLarge, "too_large"},
    {IntakeCode::NotUtf8, "not_utf8"},
    {IntakeCode::Empty, "empty"},
    {IntakeCode::NoForward, "no_kevo_forward"},
    {IntakeCode::SeveralForwards, "several_kevo_forward"},
    {IntakeCode::NotExported, "kevo_forward_not_exported"},
};

}  // namespace

const char* to_string(IntakeCode c) { return enum_text(kIntakeCodeTexts, c); }

std::optional<size_t> first_invalid_utf8(std::string_view s) {
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = b[i];
    if (c == 0) return i;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((b[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return std::nullopt;
}

std::optional<IntakeFinding> check_size(uint64_t bytes, const IntakeOptions& opts) {
  if (bytes <= opts.max_bytes) return std::nullopt;
  return IntakeFinding{IntakeCode::TooLarge,
                       fmt::format("the candidate is {} bytes ({}), over the limit of {} bytes ({})", bytes,
                                   mib(bytes), opts.max_bytes, mib(opts.max_bytes))};
}

std::optional<IntakeFinding> check_intake(std::string_view src, const IntakeOptions& opts) {
  if (auto f = check_size(src.size(), opts)) return f;
  if (auto bad = first_invalid_utf8(src))
    return IntakeFinding{
        IntakeCode::NotUtf8,
        fmt::format("the candidate is not UTF-8 text: {} 0x{:02x} at byte offset {} (line {})",
                    src[*bad] == 0 ? "a NUL byte" : "an invalid byte", static_cast<unsigned char>(src[*bad]),
                    *bad, line_of(src, *bad))};
  if (src.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos)
    return IntakeFinding{IntakeCode::Empty, fmt::format("the candidate is empty ({} bytes): it must define "
                                                        "kevo_forward (docs/ABI.md)", src.size())};
  const std::vector<size_t> defs = forward_definitions(blank_comments_and_strings(src, true));
  if (defs.empty())
    return IntakeFinding{IntakeCode::NoForward,
                         "the candidate defines no kevo_forward: the entry point must be "
                         "KEVO_EXPORT int kevo_forward(const kevo_args* a) { ... } (docs/ABI.md)"};
  if (defs.size() > 1) {
    std::string lines;
    for (size_t i = 0; i < defs.size() && i < 5; ++i) lines += fmt::format("{}{}", i ? ", " : "", line_of(src, defs[i]));
    return IntakeFinding{IntakeCode::SeveralForwards,
                         fmt::format("the candidate defines kevo_forward {} times (lines {}{}): define it once",
                                     defs.size(), lines, defs.size() > 5 ? ", ..." : "")};
  }
  return std::nullopt;
}

namespace {

// Bounds-checked view of the ELF file.
struct Elf {
  const std::string& d;
  template <class T>
  bool read(uint64_t off, T& out) const {
    if (off > d.size() || sizeof(T) > d.size() - off) return false;
    std::memcpy(&out, d.data() + off, sizeof(T));
    return true;
  }
  // The NUL-terminated string at `off` within [base, base + size), or nullopt.
  std::optional<std::string_view> str(uint64_t base, uint64_t size, uint64_t off) const {
    if (base > d.size() || size > d.size() - base || off >= size) return std::nullopt;
    std::string_view tab(d.data() + base, size);
    size_t e = tab.find('\0', off);
    if (e == std::string_view::npos) return std::nullopt;
    return tab.substr(off, e - off);
  }
};

}  // namespace

Result<std::optional<IntakeFinding>> confirm_exports(const std::filesystem::path& so_path) {
  auto data = read_file(so_path);
  if (!data) return data.unexpected();
  const Elf elf{*data};
  Elf64_Ehdr eh;
  if (!elf.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
    return fail("{}: not a 64-bit little-endian ELF file", so_path.string());
  bool seen_dynsym = false;
  std::string mangled;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh, strs;
    if (!elf.read(eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), sh))
      return fail("{}: section header {} is out of the file", so_path.string(), i);
    if (sh.sh_type != SHT_DYNSYM) continue;
    seen_dynsym = true;
    if (sh.sh_entsize != sizeof(Elf64_Sym) ||
        !elf.read(eh.e_shoff + uint64_t{sh.sh_link} * sizeof(Elf64_Shdr), strs))
      return fail("{}: malformed .dynsym", so_path.string());
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      if (!elf.read(sh.sh_offset + k * sizeof(Elf64_Sym), sym)) return fail("{}: malformed .dynsym", so_path.string());
      auto name = elf.str(strs.sh_offset, strs.sh_size, sym.st_name);
      if (!name || sym.st_shndx == SHN_UNDEF) continue;
      const int type = ELF64_ST_TYPE(sym.st_info), bind = ELF64_ST_BIND(sym.st_info);
      const int vis = ELF64_ST_VISIBILITY(sym.st_other);
      const bool exported = (bind == STB_GLOBAL || bind == STB_WEAK) && (vis == STV_DEFAULT || vis == STV_PROTECTED);
      if (*name == "kevo_forward" && exported && (type == STT_FUNC || type == STT_GNU_IFUNC))
        return std::optional<IntakeFinding>();
      if (name->find("kevo_forward") != std::string_view::npos && mangled.empty()) mangled = *name;
    }
  }
  if (!seen_dynsym) return fail("{}: no dynamic symbol table (not a shared object)", so_path.string());
  std::string why = mangled.empty() ? "" : fmt::format(" (it has {}: declare kevo_forward extern \"C\", as KEVO_EXPORT does)", mangled);
  return std::optional<IntakeFinding>(IntakeFinding{
      IntakeCode::NotExported,
      fmt::format("the compiled library does not export kevo_forward{}", why)});
}

}  // namespace kevo
