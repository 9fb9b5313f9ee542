// The ptxas resource report (nvcc -Xptxas -v): registers, shared memory, spills and stack per kernel.
// Recorded with every compile so a model (and a person) can see why a kernel is slow or spills.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kevo {

struct KernelResources {
  std::string function;  // demangled ("void tile<float, 256>(float const*, float*, int)")
  std::string mangled;   // as ptxas printed it (same as function for extern "C" kernels)
  std::string arch;      // "sm_90", "sm_90a"
  int registers = 0;
  int barriers = 0;
  long shared_bytes = 0;  // static shared memory only; dynamic shared memory is chosen at launch
  long stack_bytes = 0;   // the larger of the frame and the cumulative stack (callees included)
  long spill_store_bytes = 0;
  long spill_load_bytes = 0;
  long const_bytes = 0;  // sum of cmem[*] banks (older ptxas prints them; CUDA 13 does not)
};

// Parses the log of an nvcc run with -Xptxas -v. One entry per entry function and architecture, in
// log order; non-entry device functions are not listed. Lines it does not recognize are ignored.
std::vector<KernelResources> parse_ptxas(std::string_view log);

// Demangles an Itanium C++ ABI name; returns the input unchanged when it is not a mangled name.
std::string demangle(const std::string& name);

}  // namespace kevo
