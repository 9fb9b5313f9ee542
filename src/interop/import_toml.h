// task.toml and torch.json of an imported problem (docs/INTEROP.md): the description, dims,
// bytes, flops (derived, or --flops, or a flagged lower bound), inputs then weights with init
// tables chosen from sampled statistics, outputs, scalars and configs.
#pragma once

#include <string>
#include <vector>

#include "interop/import_probe.h"

namespace kevo::interop {

struct TaskText {
  std::string toml;
  torch::ojson sidecar;
};

struct TaskHeader {
  std::string name, category, kind, source_label, source, extra_toml, flops_override;
};

// Notes about choices made while writing (estimates, constant inputs) are added to p.notes.
TaskText write_task_text(ProblemShape& p, const TaskHeader& h);

// The text without the [[configs]] blocks write_task_text wrote for `names` (each block runs to
// the next table header or the end).
std::string drop_config_blocks(const std::string& toml, const std::vector<std::string>& names);

// "19_ReLU.py" -> "19_relu" without the collapsing of task_name_from: lower case, [a-z0-9_].
std::string sanitize_name(const std::string& s);
// A TOML basic string: quoted, with escapes.
std::string toml_string(const std::string& s);
std::string guess_category(const std::string& name, const std::string& source);

}  // namespace kevo::interop
