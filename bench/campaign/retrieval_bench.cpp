// kevo-retrieval-bench: retrieval from a large archive. Fills a scratch SQLite run database with
// N synthetic entries (op kinds, dtypes, bounds, sizes and ~1.5 KB kernels drawn at random), then
// times what a run does once at its search's start: reading the light rows, indexing their
// features, and retrieving the examples (the shortlist's kernels read from the database), over
// several queries. The figures are printed; nothing is asserted.
//
//   kevo-retrieval-bench [N=100000] [queries=20]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "archive/fingerprint.h"
#include "archive/retrieval.h"
#include "store/run_db.h"

namespace {

using namespace kevo;
using Clock = std::chrono::steady_clock;

const char* kOps[] = {"elementwise", "reduction", "matmul", "conv", "norm", "softmax", "scan", "attention", "pool", "gather"};
const char* kDtypes[] = {"f32", "f16", "bf16", "i32", "f64"};
const char* kWords[] = {"__global__", "void", "float4", "threadIdx", "blockIdx", "__shfl_down_sync", "__syncthreads",
                        "half2", "wmma", "load", "store", "tile", "acc", "reduce", "stride", "lane", "warp", "smem"};

store::ArchiveRow synthetic(std::mt19937_64& rng, int i) {
  auto pick = [&](auto& arr) { return arr[rng() % (sizeof(arr) / sizeof(arr[0]))]; };
  archive::TaskFeatures f;
  f.op_kind = pick(kOps);
  f.dtypes = {pick(kDtypes)};
  f.bound = rng() % 3 ? "memory" : "compute";
  f.main_elements = std::pow(10.0, 4 + double(rng() % 500) / 100);
  f.shapes = {fmt::format("main: N={}", int64_t(f.main_elements))};
  store::ArchiveRow r;
  r.kind = store::ArchiveKind::kWinner;
  r.task = fmt::format("task_{}", i % 5000);
  r.gpu = rng() % 2 ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200";
  r.config = "main";
  r.features_json = f.to_json().dump();
  for (int w = 0; w < 200; ++w) r.source += std::string(pick(kWords)) + (w % 12 ? " " : "\n");
  r.source += fmt::format("// entry {}\n", i);
  r.speedup = 1 + double(rng() % 300) / 100;
  r.held_out = rng() % 10 ? store::HeldOut::kPassed : store::HeldOut::kFailed;
  r.origin = "synthetic";
  r.fingerprint = archive::fingerprint_of(r);
  return r;
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int queries = argc > 2 ? std::atoi(argv[2]) : 20;
  std::string tmpl = (std::filesystem::temp_directory_path() / "kevo-retrieval-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  const std::filesystem::path dir = tmpl;
  auto db = store::RunDb::open((dir / "runs.db").string());
  if (!db) return std::fprintf(stderr, "%s\n", db.error().message.c_str()), 1;
  std::mt19937_64 rng(7);
  for (int at = 0; at < n;) {
    std::vector<store::ArchiveRow> batch;
    for (int k = 0; k < 5000 && at < n; ++k, ++at) batch.push_back(synthetic(rng, at));
    if (auto r = (*db)->add_archive(batch); !r) return std::fprintf(stderr, "%s\n", r.error().message.c_str()), 1;
  }
  std::vector<double> load, index, retrieve, total;
  for (int q = 0; q < queries; ++q) {
    archive::Query query;
    store::ArchiveRow probe = synthetic(rng, n + q);
    query.task = "new_task";
    query.features = archive::TaskFeatures::from_text(probe.features_json);
    query.gpu = "NVIDIA H100 80GB HBM3";
    query.source = probe.source;
    const auto t0 = Clock::now();
    auto light = (*db)->archive(false);
    load.push_back(ms_since(t0));
    const auto t1 = Clock::now();
    archive::ArchiveIndex idx(*light);
    index.push_back(ms_since(t1));
    const auto t2 = Clock::now();
    auto m = archive::retrieve(idx, query, 2, [&](int64_t id) { return (*db)->archive_entry(id); });
    retrieve.push_back(ms_since(t2));
    total.push_back(ms_since(t0));
    if (!m || m->empty()) return std::fprintf(stderr, "no match\n"), 1;
  }
  std::printf("archive of %d entries, %d queries (median / max ms):\n", n, queries);
  auto line = [](const char* what, const std::vector<double>& v) {
    std::printf("  %-44s %8.2f / %8.2f\n", what, median(v), *std::max_element(v.begin(), v.end()));
  };
  line("read the light rows from SQLite", load);
  line("index their features", index);
  line("retrieve 2 (score all, read 16 kernels, rank)", retrieve);
  line("all of it (once per run)", total);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
