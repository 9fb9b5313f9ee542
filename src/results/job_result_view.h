// An evaluation job's result as a worker stores it (JobRow::result_json, evolve/job_payload.h
// JobResult::to_json): the verdict, the worker's busy seconds and its name. The engine reads it
// back whole with check's reader; this is the read side's view. Thread-safety: plain data.
#pragma once

#include <string>

#include "results/verdict_view.h"

namespace kevo::results {

struct JobResultView {
  VerdictView verdict;
  double busy_s = 0;   // the worker's evaluation seconds
  std::string worker;  // who wrote it
};

JobResultView job_result_view(const std::string& stored_text);

}  // namespace kevo::results
