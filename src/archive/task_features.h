// What the archive knows of a task, so entries of one task can be matched to another: the kind of
// operation (the task's category: elementwise, reduction, matmul, ...), its dtypes, whether its
// speed-of-light floor is memory- or compute-bound, and its visible shapes. Held-out configs are
// never part of it: they exist to catch kernels fitted to the shapes a model saw.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace kevo::archive {

struct TaskFeatures {
  std::string op_kind;              // the task's category; empty: not known
  std::vector<std::string> dtypes;  // every input and output dtype, sorted, each once
  std::string bound;                // "memory", "compute" or empty (not known)
  std::vector<std::string> shapes;  // one line per visible config: "main: N=1048576"
  double main_elements = 0;         // the timed config's input and output elements (0: not known)

  nlohmann::json to_json() const;
  // `where` names the document in errors ("lab.jsonl line 3: features").
  static Result<TaskFeatures> from_json(const nlohmann::json& j, const std::string& where);
  // Stored text as a row holds it; damaged text reads as no features (never an error: advice only).
  static TaskFeatures from_text(const std::string& text);
};

}  // namespace kevo::archive
