// task: gelu
// Adversarial (tampering with the timer from inside its process): computes GELU correctly, but on
// its first call rewrites the runner's import slot (GOT) of cudaEventElapsedTime so that every span
// the runner reads back is a quarter of the truth: a 4x "speedup" measured in-process. kevo-runner
// is linked with full RELRO, so the slot is read-only; the candidate makes the page writable again
// (writable, not executable: the seccomp filter allows that). The runner's event times are then
// wrong, and only the checker's own clock, outside the process, can tell: timing_forged.
#include <kevo/kernel.h>

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace {

using ElapsedFn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
ElapsedFn g_real = nullptr;
bool g_patched = false;

cudaError_t shrunk(float* ms, cudaEvent_t a, cudaEvent_t b) {
  cudaError_t e = g_real(ms, a, b);
  if (e == cudaSuccess && ms) *ms *= 0.25f;
  return e;
}

template <class T>
const T* at(const dl_phdr_info* info, ElfW(Addr) p) {
  // ld.so relocates most pointers in .dynamic; an unrelocated one is an offset from the load base.
  return reinterpret_cast<const T*>(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

void patch_table(const dl_phdr_info* info, const ElfW(Rela)* rel, size_t bytes, const ElfW(Sym)* symtab,
                 const char* strtab) {
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; rel && i < bytes / sizeof(ElfW(Rela)); ++i) {
    const char* name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
    if (std::strncmp(name, "cudaEventElapsedTime", 20) != 0) continue;
    auto** slot = reinterpret_cast<void**>(info->dlpi_addr + rel[i].r_offset);
    auto base = reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(page - 1);
    if (mprotect(reinterpret_cast<void*>(base), static_cast<size_t>(page), PROT_READ | PROT_WRITE) != 0) continue;
    if (*slot != reinterpret_cast<void*>(&shrunk)) g_real = reinterpret_cast<ElapsedFn>(*slot);
    *slot = reinterpret_cast<void*>(&shrunk);
    g_patched = true;
  }
}

// The first object dl_iterate_phdr reports is the main program: kevo-runner.
int patch_runner(dl_phdr_info* info, size_t, void*) {
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 1;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela)*jmprel = nullptr, *rela = nullptr;
  size_t jmpsz = 0, relasz = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symtab = at<ElfW(Sym)>(info, d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) strtab = at<char>(info, d->d_un.d_ptr);
    if (d->d_tag == DT_JMPREL) jmprel = at<ElfW(Rela)>(info, d->d_un.d_ptr);
    if (d->d_tag == DT_PLTRELSZ) jmpsz = d->d_un.d_val;
    if (d->d_tag == DT_RELA) rela = at<ElfW(Rela)>(info, d->d_un.d_ptr);
    if (d->d_tag == DT_RELASZ) relasz = d->d_un.d_val;
  }
  if (symtab && strtab) {
    patch_table(info, jmprel, jmpsz, symtab, strtab);
    patch_table(info, rela, relasz, symtab, strtab);
  }
  return 1;
}

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = gelu(x[i]);
}

}  // namespace

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  if (!g_patched) dl_iterate_phdr(patch_runner, nullptr);
  int64_t n = kevo_numel(&a->inputs[0]);
  int64_t want = (n + 255) / 256;
  unsigned blocks = (unsigned)(want < 1 ? 1 : (want > 65536 ? 65536 : want));
  gelu_kernel<<<blocks, 256, 0, a->stream>>>((const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
