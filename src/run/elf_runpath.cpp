#include "run/elf_runpath.h"

#include <elf.h>

#include <cstring>

namespace kevo {
namespace {

template <class T>
std::optional<T> at(std::string_view b, uint64_t off) {
  if (off > b.size() || b.size() - off < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

// The file offset of virtual address `va` (the string table is named by address).
std::optional<uint64_t> file_offset(std::string_view b, const Elf64_Ehdr& eh, uint64_t va) {
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    auto ph = at<Elf64_Phdr>(b, eh.e_phoff + uint64_t{i} * eh.e_phentsize);
    if (!ph) return std::nullopt;
    if (ph->p_type == PT_LOAD && va >= ph->p_vaddr && va - ph->p_vaddr < ph->p_filesz)
      return ph->p_offset + (va - ph->p_vaddr);
  }
  return std::nullopt;
}

std::optional<Elf64_Phdr> dynamic_segment(std::string_view b, const Elf64_Ehdr& eh) {
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    auto ph = at<Elf64_Phdr>(b, eh.e_phoff + uint64_t{i} * eh.e_phentsize);
    if (!ph) return std::nullopt;
    if (ph->p_type == PT_DYNAMIC) return ph;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> elf_runpath(std::string_view b) {
  auto eh = at<Elf64_Ehdr>(b, 0);
  if (!eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr))
    return std::nullopt;
  auto dyn = dynamic_segment(b, *eh);
  if (!dyn) return std::nullopt;
  std::optional<uint64_t> strtab, runpath, rpath;
  for (uint64_t off = dyn->p_offset; off + sizeof(Elf64_Dyn) <= dyn->p_offset + dyn->p_filesz; off += sizeof(Elf64_Dyn)) {
    auto d = at<Elf64_Dyn>(b, off);
    if (!d || d->d_tag == DT_NULL) break;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (d->d_tag == DT_RUNPATH) runpath = d->d_un.d_val;
    if (d->d_tag == DT_RPATH) rpath = d->d_un.d_val;
  }
  const auto name = runpath ? runpath : rpath;
  if (!strtab || !name) return std::nullopt;
  auto base = file_offset(b, *eh, *strtab);
  if (!base || *base + *name >= b.size()) return std::nullopt;
  const char* s = b.data() + *base + *name;
  return std::string(s, strnlen(s, b.size() - (*base + *name)));
}

std::vector<std::string> origin_entries(const std::string& runpath, const std::filesystem::path& origin) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= runpath.size()) {
    const size_t end = std::min(runpath.find(':', start), runpath.size());
    std::string e = runpath.substr(start, end - start);
    bool uses = false;
    for (const std::string tok : {"${ORIGIN}", "$ORIGIN"})
      for (size_t p = e.find(tok); p != std::string::npos; p = e.find(tok, p + origin.string().size())) {
        e.replace(p, tok.size(), origin.string());
        uses = true;
      }
    if (uses) out.push_back(e);
    start = end + 1;
  }
  return out;
}

}  // namespace kevo
