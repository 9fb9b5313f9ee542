#include "archive/jsonl.h"

#include <fmt/format.h>

#include "archive/fingerprint.h"
#include "archive/task_features.h"
#include "util/fs.h"
#include "util/json_fields.h"

namespace kevo::archive {

using nlohmann::json;
using store::ArchiveRow;

json entry_json(const ArchiveRow& r) {
  return {{"kevo_archive", kJsonlVersion},
          {"kind", store::to_string(r.kind)},
          {"task", r.task},
          {"gpu", r.gpu},
          {"arch", r.arch},
          {"config", r.config},
          {"features", TaskFeatures::from_text(r.features_json).to_json()},
          {"name", r.name},
          {"rationale", r.rationale},
          {"source", r.source},
          {"diff", r.diff},
          {"run", r.run_id},
          {"candidate", r.candidate_id},
          {"parent", r.parent_id},
          {"speedup", r.speedup},
          {"speedup_ci", {r.speedup_lo, r.speedup_hi}},
          {"time_ms", r.time_ms},
          {"baseline_ms", r.baseline_ms},
          {"sol_before", r.sol_before},
          {"sol_after", r.sol_after},
          {"held_out", store::to_string(r.held_out)},
          {"fake", r.fake},
          {"origin", r.origin},
          {"created_at", r.created_at}};
}

std::string to_jsonl(const std::vector<ArchiveRow>& rows) {
  std::string out;
  for (const auto& r : rows) out += entry_json(r).dump() + "\n";
  return out;
}

namespace {

// The enum fields and the features, which JsonFields does not read.
Status read_typed(const json& j, const std::string& where, ArchiveRow& r) {
  const std::string kind = j.value("kind", std::string());
  auto k = store::parse_archive_kind(kind);
  if (!k) return fail("{}: field 'kind' is '{}', expected winner or improvement", where, kind);
  r.kind = *k;
  const std::string held = j.value("held_out", std::string("not_checked"));
  auto h = store::parse_held_out(held);
  if (!h) return fail("{}: field 'held_out' is '{}', expected passed, failed or not_checked", where, held);
  r.held_out = *h;
  auto f = TaskFeatures::from_json(j.contains("features") ? j["features"] : json::object(), where + ": features");
  if (!f) return f.unexpected();
  r.features_json = f->to_json().dump();
  if (auto ci = j.find("speedup_ci"); ci != j.end() && !ci->is_null()) {
    if (!ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number())
      return fail("{}: field 'speedup_ci' must be two numbers [lo, hi]", where);
    r.speedup_lo = (*ci)[0].get<double>(), r.speedup_hi = (*ci)[1].get<double>();
  }
  return {};
}

Status check_required(const ArchiveRow& r, const std::string& where) {
  if (r.task.empty()) return fail("{}: field 'task' is missing or empty: an entry must name its task", where);
  if (r.gpu.empty())
    return fail("{}: field 'gpu' is missing or empty: an example's speedup means nothing without the GPU it was "
                "measured on",
                where);
  if (r.source.empty()) return fail("{}: field 'source' is missing or empty: an entry is a kernel", where);
  if (!(r.speedup > 0)) return fail("{}: field 'speedup' must be a number above 0", where);
  return {};
}

}  // namespace

Result<ArchiveRow> entry_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) return fail("{}: is {}, expected an object", where, j.type_name());
  JsonFields f(j, where);
  const int version = f.get("kevo_archive", 0);
  KEVO_TRY(f.status());
  if (version != kJsonlVersion)
    return fail("{}: field 'kevo_archive' is {}, expected {} (not a kevo archive line, or a newer kevo's)", where,
                j.contains("kevo_archive") ? j["kevo_archive"].dump() : "missing", kJsonlVersion);
  ArchiveRow r;
  r.task = f.get("task", std::string());
  r.gpu = f.get("gpu", std::string());
  r.arch = f.get("arch", std::string());
  r.config = f.get("config", std::string());
  r.name = f.get("name", std::string());
  r.rationale = f.get("rationale", std::string());
  r.source = f.get("source", std::string());
  r.diff = f.get("diff", std::string());
  r.run_id = f.get("run", int64_t{0});
  r.candidate_id = f.get("candidate", int64_t{0});
  r.parent_id = f.get("parent", int64_t{0});
  r.speedup = f.get("speedup", 0.0);
  r.time_ms = f.get("time_ms", 0.0);
  r.baseline_ms = f.get("baseline_ms", 0.0);
  r.sol_before = f.get("sol_before", 0.0);
  r.sol_after = f.get("sol_after", 0.0);
  r.fake = f.get("fake", false);
  r.origin = f.get("origin", std::string());
  r.created_at = f.get("created_at", 0.0);
  KEVO_TRY(f.status());
  KEVO_TRY(read_typed(j, where, r));
  KEVO_TRY(check_required(r, where));
  r.fingerprint = fingerprint_of(r);
  return r;
}

Result<std::vector<ArchiveRow>> parse_jsonl(std::string_view text, const std::string& file) {
  std::vector<ArchiveRow> out;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{} line {}", file, line_no);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) return fail("{}: not valid JSON (a damaged or cut-off line); nothing was imported", where);
    auto r = entry_from_json(j, where);
    if (!r) return fail("{}; nothing was imported", r.error().message);
    const std::string was = r->origin;
    r->origin = "imported from " + where + (was.empty() ? "" : " (was: " + was + ")");
    out.push_back(std::move(*r));
  }
  return out;
}

Result<std::vector<ArchiveRow>> read_jsonl(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return fail("{}: cannot read: {}", file.string(), text.error().message);
  return parse_jsonl(*text, file.string());
}

}  // namespace kevo::archive
