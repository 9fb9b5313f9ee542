// robust-kbench task folders (SakanaAI/robust-kbench, docs/INTEROP.md): what a folder holds and the
// kevo reference files made from it. A folder has func_forward.py (a functional `forward_fn`, a
// `Model` whose `forward(..., fn=forward_fn)` swaps in a kernel, `get_inputs(**sizes)`), maybe
// func_backward.py (a torch.autograd.Function whose backward calls a pluggable `backward_fn`), and
// config_{forward,backward}.json: `single_{input,init,shared}_configs` (the default run) and
// `multi_*` lists whose Cartesian product input x init x shared, shared keys overriding, are the
// configurations robust-kbench evaluates. Nothing here runs Python.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interop/backward_reference.h"
#include "torch/bridge.h"
#include "util/result.h"

namespace kevo::interop {

// One configuration: the keyword arguments of Model(...) and get_inputs(...), in file order.
using RkbSettings = std::vector<std::pair<std::string, torch::ojson>>;

struct RkbConfigs {
  RkbSettings main;                // the single_* lists' first entries, merged
  std::vector<RkbSettings> multi;  // the multi_* product, duplicates removed, in robust-kbench's order
};

struct RkbFolder {
  std::filesystem::path dir;
  std::string forward_source;                 // func_forward.py
  std::optional<std::string> backward_source;  // func_backward.py, where the folder has one
  RkbConfigs forward;                         // config_forward.json
  std::optional<RkbConfigs> backward;         // config_backward.json (config_forward.json if absent)
};

// The folders named by `args`: a task folder (it holds func_forward.py) as given, any other folder
// as the task folders directly inside it, by name. An error names an argument that holds none.
Result<std::vector<std::filesystem::path>> robust_kbench_folders(const std::vector<std::string>& args);

// Reads a task folder; errors name the file and, for configurations, the list and entry.
Result<RkbFolder> read_robust_kbench(const std::filesystem::path& dir);

// config_*.json's text; `where` (the file) starts every error.
Result<RkbConfigs> parse_rkb_configs(const std::string& json_text, const std::string& where);

// The value of `key` in `s`, or nullptr.
const torch::ojson* rkb_setting(const RkbSettings& s, const std::string& key);

// A KernelBench-style reference (docs/INTEROP.md, "References") made of robust-kbench's module
// source, unchanged, followed by the settings as top-level names (the integer ones are the sizes
// kevo varies) and a `Model` / `get_inputs` / `get_init_inputs` that pass each setting to the
// robust-kbench Model and get_inputs parameter of that name. `label` names the source in a comment.
std::string rkb_reference_source(const std::string& module_source, const RkbSettings& settings,
                                 const std::string& label);

using RkbBackwardSignature = BackwardSignature;

// The names func_backward.py passes to ctx.save_for_backward, and (in *params) the parameters of its
// autograd Function's forward after ctx; empty when either is not found (then all are saved).
std::vector<std::string> rkb_saved_names(const std::string& backward_source, std::vector<std::string>* params);

// rkb_reference_source's text, with robust-kbench's Model changed in place: its forward takes the
// forward's arguments and the incoming gradient of each forward output, and returns, by
// torch.autograd through the forward's PyTorch code, the gradient of every floating-point tensor
// argument, then of every parameter in `parameters`; the `unsaved` parameters become constants of
// the module (not inputs: the gradients do not depend on them, says robust-kbench). Its get_inputs()
// appends one normal draw per forward output.
std::string rkb_backward_source(const std::string& forward_reference, const RkbBackwardSignature& sig);

}  // namespace kevo::interop
