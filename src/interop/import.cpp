#include "interop/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "interop/import_probe.h"
#include "interop/import_staging.h"
#include "interop/import_tolerance.h"
#include "interop/import_toml.h"
#include "interop/task_compat.h"
#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

struct Imported {
  std::string toml;
  torch::ojson sidecar;
  std::vector<std::string> notes;
  ProblemShape shape;
};

// Analyses the reference loaded from `file` and writes task.toml's text. `kind` starts the
// description; extra_toml is appended to the top-level keys (torch_baseline).
Result<Imported> build_task(torch::TorchBridge& b, const fs::path& file, const std::string& name,
                            const std::string& kind, const std::string& source_label,
                            const std::string& extra_toml, const ImportOptions& o) {
  auto p = analyze_problem(b, file, source_label, o.seed);
  if (!p) return p.unexpected();
  bool tensor_input = !p->base.weights.empty();
  for (const auto& a : p->base.args) tensor_input |= !a.scalar;
  if (p->base.args.empty() || !tensor_input)
    return fail("{}: get_inputs() returns no tensor and the module has no parameters", source_label);
  std::string source;
  if (auto txt = read_file(file); txt) source = *txt;
  TaskHeader h{name, o.category.empty() ? guess_category(name, source) : o.category, kind, source_label, source,
               extra_toml, o.flops};
  TaskText t = write_task_text(*p, h);
  return Imported{t.toml, t.sidecar, p->notes, std::move(*p)};
}

// The staged task's tolerance derived from its oracle (import_tolerance.h), then the vet: the
// configs it finds degenerate are dropped and the notes say so; a degenerate main config, or a task
// the drops leave invalid (no ragged config, no held-out one), refuses the import.
Status settle_task(torch::TorchBridge& b, const fs::path& staging, Imported& im, const ImportOptions& o) {
  auto task = load_task_with_torch(staging);
  if (!task) return task.unexpected();
  auto tol = derive_tolerance(b, *task, o.seed ? o.seed : 20240601);
  if (!tol) return fail("deriving the tolerance: {}", tol.error().message);
  im.notes.insert(im.notes.end(), tol->notes.begin(), tol->notes.end());
  if (!tol->toml.empty()) {
    im.toml += tol->toml;
    KEVO_TRY(write_task_files(staging, im.toml, im.sidecar));
    task = load_task_with_torch(staging);
    if (!task) return task.unexpected();
  }
  if (!o.vet) return {};
  auto vet = o.vet(b, *task);
  if (!vet) return fail("refused: {}", vet.error().message);
  for (const auto& n : vet->notes) im.notes.push_back("lint: " + n);
  if (vet->dropped.empty()) return {};
  std::vector<std::string> names;
  for (const auto& d : vet->dropped) {
    if (d.config == task->main().name) return fail("refused: the main config is degenerate: {}", d.why);
    names.push_back(d.config);
    im.notes.push_back(fmt::format("config '{}' dropped: {}", d.config, d.why));
  }
  im.toml = drop_config_blocks(im.toml, names);
  KEVO_TRY(write_task_files(staging, im.toml, im.sidecar));
  auto left = load_task_with_torch(staging);
  if (!left) return fail("refused: without its degenerate config(s) {} the task is not valid: {}", fmt::join(names, ", "),
                         left.error().message);
  return {};
}

}  // namespace

std::string task_name_from(const std::string& stem) {
  std::string s = sanitize_name(stem);
  std::string out;
  for (char c : s)
    if (!(c == '_' && (out.empty() || out.back() == '_'))) out += c;
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "imported" : out;
}

Result<std::vector<fs::path>> kernelbench_files(const std::vector<std::string>& args) {
  std::vector<fs::path> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_regular_file(a, ec)) {
      out.emplace_back(a);
      continue;
    }
    if (!fs::is_directory(a, ec)) return fail(ErrorCode::kNotFound, "{}: no such file or folder", a);
    std::vector<fs::path> level;
    for (const auto& e : fs::directory_iterator(a, ec))
      if (e.path().extension() == ".py" && e.is_regular_file(ec)) level.push_back(e.path());
    if (ec) return fail("{}: cannot list: {}", a, ec.message());
    auto num = [](const fs::path& p) { return std::atol(p.filename().string().c_str()); };
    std::sort(level.begin(), level.end(), [&](const fs::path& x, const fs::path& y) {
      return num(x) != num(y) ? num(x) < num(y) : x.filename() < y.filename();
    });
    if (level.empty()) return fail("{}: holds no .py problem files", a);
    out.insert(out.end(), level.begin(), level.end());
  }
  return out;
}

Result<ImportedTask> import_kernelbench(torch::TorchBridge& b, const fs::path& file, const ImportOptions& o,
                                        ProblemShape* shape) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return fail(ErrorCode::kNotFound, "{}: no such file", file.string());
  auto source = read_file(file);
  if (!source) return source.unexpected();
  if (source->find("get_inputs") == std::string::npos)
    return fail(ErrorCode::kParse, "{}: not a KernelBench problem file: it defines no get_inputs()",
                file.string());
  std::string name = o.name.empty() ? task_name_from(file.stem().string()) : o.name;
  auto staging = make_staging(o.out_dir, name, o.overwrite);
  if (!staging) return staging.unexpected();
  auto cleanup = [&] {
    std::error_code e;
    fs::remove_all(*staging, e);
  };
  if (auto s = write_file_atomic(*staging / "reference.py", *source); !s) {
    cleanup();
    return s.unexpected();
  }
  auto im = build_task(b, file, name,
                       fmt::format("Imported from the KernelBench problem file {}.", file.filename().string()),
                       file.string(), "", o);
  if (!im) {
    cleanup();
    return fail("{}", im.error().message);
  }
  if (auto s = write_task_files(*staging, im->toml, im->sidecar); !s) {
    cleanup();
    return s.unexpected();
  }
  if (auto s = settle_task(b, *staging, *im, o); !s) {
    cleanup();
    return fail("{}: {}", file.string(), s.error().message);
  }
  if (auto s = publish(*staging, o.out_dir / name); !s) {
    cleanup();
    return s.unexpected();
  }
  if (shape) *shape = std::move(im->shape);
  return ImportedTask{name, o.out_dir / name, im->notes, std::nullopt};
}

Result<std::vector<EvoRecord>> parse_evoengineer(const fs::path& file) {
  auto text = read_file(file);
  if (!text) return text.unexpected();
  torch::ojson j;
  try {
    j = torch::ojson::parse(*text);
  } catch (const torch::ojson::parse_error& e) {
    return fail(ErrorCode::kParse, "{}: not valid JSON: {}", file.string(), e.what());
  }
  auto field = [](const torch::ojson& r, std::initializer_list<const char*> keys) -> std::optional<std::string> {
    for (const char* k : keys)
      if (r.contains(k) && r[k].is_string()) return r[k].get<std::string>();
    return std::nullopt;
  };
  std::vector<EvoRecord> out;
  auto one = [&](const std::string& label, std::string name, const torch::ojson& r) -> Status {
    if (!r.is_object())
      return fail(ErrorCode::kParse, "{}: record {}: must be a JSON object", file.string(), label);
    if (name.empty()) {
      auto n = field(r, {"name", "task_name", "Op_Name", "op_name"});
      if (!n)
        return fail(ErrorCode::kParse, "{}: record {}: has no name (name, task_name or Op_Name)",
                    file.string(), label);
      name = *n;
    }
    EvoRecord rec;
    rec.name = name;
    struct K {
      std::string* dst;
      std::initializer_list<const char*> keys;
      const char* what;
    };
    for (const K& k : {K{&rec.original, {"org_py_code", "PyTorch_Code_Module"}, "the original module (org_py_code)"},
                       K{&rec.functional, {"func_py_code", "PyTorch_Code_Functional"}, "the functional module (func_py_code)"},
                       K{&rec.cuda, {"cuda_code", "CUDA_Code"}, "the CUDA extension (cuda_code)"}}) {
      auto v = field(r, k.keys);
      if (!v)
        return fail(ErrorCode::kParse, "{}: record '{}': missing {} (a string)", file.string(), name,
                    k.what);
      if (v->find_first_not_of(" \n\t\r") == std::string::npos)
        return fail(ErrorCode::kParse, "{}: record '{}': {} is empty", file.string(), name, k.what);
      *k.dst = *v;
    }
    if (rec.functional.find("get_inputs") == std::string::npos)
      return fail(ErrorCode::kParse, "{}: record '{}': the functional module defines no get_inputs()",
                  file.string(), name);
    out.push_back(std::move(rec));
    return {};
  };
  if (j.is_object()) {
    // Either one record, or {name: record}.
    if (j.contains("func_py_code") || j.contains("PyTorch_Code_Functional")) {
      KEVO_TRY(one("0", "", j));
    } else {
      for (const auto& [k, v] : j.items()) KEVO_TRY(one("'" + k + "'", k, v));
    }
  } else if (j.is_array()) {
    size_t i = 0;
    for (const auto& v : j) KEVO_TRY(one(std::to_string(i++), "", v));
  } else {
    return fail(ErrorCode::kParse, "{}: must hold a JSON object or array of records", file.string());
  }
  if (out.empty()) return fail(ErrorCode::kParse, "{}: holds no records", file.string());
  return out;
}

Result<ImportedTask> import_evoengineer_record(torch::TorchBridge& b, const EvoRecord& rec,
                                               const fs::path& source, const ImportOptions& o) {
  std::string name = o.name.empty() ? task_name_from(rec.name) : o.name;
  auto staging = make_staging(o.out_dir, name, o.overwrite);
  if (!staging) return staging.unexpected();
  auto cleanup = [&] {
    std::error_code e;
    fs::remove_all(*staging, e);
  };
  for (const auto& [f, text] : {std::pair<const char*, const std::string*>{"reference.py", &rec.functional},
                                {"original.py", &rec.original},
                                {"torch_baseline.cu", &rec.cuda}})
    if (auto s = write_file_atomic(*staging / f, *text); !s) {
      cleanup();
      return s.unexpected();
    }
  std::string label = fmt::format("{} (record '{}')", source.string(), rec.name);
  auto im = build_task(
      b, *staging / "reference.py", name,
      fmt::format("Imported from the EvoEngineer record '{}' (functional form of the module).", rec.name),
      label,
      "# The record's CUDA kernel, as a PyTorch extension: a baseline timed through the bridge.\n"
      "torch_baseline = \"torch_baseline.cu\"\n",
      o);
  if (!im) {
    cleanup();
    return fail("{}", im.error().message);
  }
  im->sidecar["original"] = "original.py";
  im->sidecar["torch_baseline"] = "torch_baseline.cu";
  if (auto s = write_task_files(*staging, im->toml, im->sidecar); !s) {
    cleanup();
    return s.unexpected();
  }
  if (auto s = settle_task(b, *staging, *im, o); !s) {
    cleanup();
    return fail("{}: {}", label, s.error().message);
  }
  if (auto s = publish(*staging, o.out_dir / name); !s) {
    cleanup();
    return s.unexpected();
  }
  return ImportedTask{name, o.out_dir / name, im->notes, std::nullopt};
}

}  // namespace kevo::interop
