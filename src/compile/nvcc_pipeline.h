// nvcc runs its phases one after another, but the host front end (preprocess + cudafe++) and the
// device one (preprocess + cicc + ptxas + fatbinary) do not depend on each other once the module
// id that links them is fixed. Together they are about 60% of a small candidate's compile. This
// turns nvcc's own sub-command list (`nvcc --dryrun`, which the nvcc manual offers for running the
// steps by hand) into a shell script that runs the two front ends in parallel and the rest as nvcc
// would. The result is nvcc's shared object (the tests compare their symbols); anything
// unexpected in the list means "use plain nvcc".
// Two link-time savings where nvcc's list allows them (about 0.15 s of a 1.3 s compile on a
// 2-core machine): a whole-program module has no relocatable device code, so nvcc's device link
// (nvlink, a fatbinary and a stub compile) registers nothing and is left out, as CMake does for
// CUDA targets without separable compilation; and g++ may link with gold, which reads
// libstdc++'s symbol table in a third of ld.bfd's time.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace kevo {

struct NvccScript {
  std::string script;          // for /bin/sh, run in the directory nvcc would have run in
  std::string module_id_path;  // where the script expects the module id (write it first)
  std::string driver_output;   // what nvcc itself printed besides the commands (warnings)
};

struct NvccScriptOptions {
  std::string fuse_ld;  // g++'s -fuse-ld= for the final link ("gold"); empty: g++'s default
};

// The script's exit status when the final link fails with NvccScriptOptions::fuse_ld: the caller
// runs plain nvcc then, so a linker nvcc does not use never decides a verdict (an undefined
// symbol is reported by nvcc's own link, at the cost of a second compile).
inline constexpr int kLinkerFailedExit = 97;

// `dryrun` is the stderr of `nvcc ARGS --dryrun`. Fails, naming what did not match, when the list
// is not the single-architecture whole-program shape this knows (the caller then runs plain nvcc).
Result<NvccScript> parallel_nvcc_script(std::string_view dryrun, const NvccScriptOptions& o = {});

// A module id in nvcc's format ("_<hex8>_<len>_<name>_<hex8>") for the source file `file_name`;
// `salt` makes two modules of the same source in one process distinct, as nvcc's own ids are.
std::string nvcc_module_id(std::string_view file_name, uint64_t salt);

}  // namespace kevo
