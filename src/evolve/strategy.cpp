#include "evolve/strategy.h"

#include <toml++/toml.h>

#include <fstream>
#include <sstream>
#include <type_traits>

#include "util/enum_text.h"
#include "util/json_fields.h"
#include "util/toml_text.h"

namespace kevo::evolve {

namespace {

// Stored as a candidate's operator and named in [evolve] operators: a value's text never changes.
constexpr EnumText<Op> kOpTexts[] = {
    {Op::kInit, "init"},
    {Op::kMutate, "mutate"},
    {Op::kCrossover, "crossover"},
    {Op::kRewrite, "rewrite"},
    {Op::kDiffEdit, "diff_edit"},
    {Op::kRepair, "repair"},
    {Op::kTune, "tune"},
    {Op::kAgent, "agent"},
};

constexpr EnumText<Mutator> kMutatorTexts[] = {
    {Mutator::kSingle, "single"},
    {Mutator::kAgent, "agent"},
};

}  // namespace

const char* to_string(Mutator m) { return enum_text(kMutatorTexts, m); }

std::optional<Mutator> parse_mutator(std::string_view s) { return enum_parse(kMutatorTexts, s); }

const char* to_string(Op op) { return enum_text(kOpTexts, op); }

std::optional<Op> parse_op(std::string_view s) { return enum_parse(kOpTexts, s); }

void apply_mutator(StrategyConfig& s, Mutator m) {
  if (s.mutator == m) return;
  s.mutator = m;
  s.name += std::string("+") + to_string(m);
}

std::vector<std::string> preset_names() {
  return {"kevo-default", "kevo-archive", "evoengineer-free", "evoengineer-insight", "evoengineer-full",
          "eoh", "funsearch", "ai-cuda-engineer", "agent", "evoengineer-agent"};
}

Result<StrategyConfig> preset(std::string_view name) {
  StrategyConfig s;
  s.name = std::string(name);
  // Published defaults shared by the EvoEngineer comparison: 45 candidates per task, 4 proposals
  // in parallel, population 5.
  s.max_candidates = 45;
  s.parallel = 4;
  s.population.size = 5;
  if (name == "evoengineer-free") {
    // Task context only; every trial rewrites the task from scratch; keep the single best.
    s.info = {true, false, false};
    s.operators = {{Op::kRewrite, 1.0}};
    s.population.kind = PolicyKind::kSingleBest;
    s.style = "evoengineer";
  } else if (name == "evoengineer-insight") {
    // Task context plus the insights of earlier trials (their rationale and result, no code).
    s.info = {true, false, true};
    s.operators = {{Op::kRewrite, 1.0}};
    s.population.kind = PolicyKind::kSingleBest;
    s.style = "evoengineer";
  } else if (name == "evoengineer-full") {
    // Task context, earlier solutions with times, insights; an elite of 5 with rank selection.
    s.info = {true, true, true};
    s.operators = {{Op::kMutate, 1.0}};
    s.population.kind = PolicyKind::kElite;
    s.style = "evoengineer";
  } else if (name == "eoh") {
    // Evolution of Heuristics: a thought plus code per individual; E1 (explore a different
    // idea: rewrite), E2 (combine: crossover), M1/M2 (modify: mutate); rank selection.
    s.info = {true, true, true};
    s.operators = {{Op::kRewrite, 1.0}, {Op::kCrossover, 1.0}, {Op::kMutate, 2.0}};
    s.population.kind = PolicyKind::kElite;
    s.style = "eoh";
  } else if (name == "funsearch") {
    // Islands of programs; the prompt shows two earlier versions, worst to best, and asks for
    // the next one; no stated insights. Four islands, migrating every 10 candidates, the worse
    // two reset from the better two every 20 (FunSearch uses 10 islands reset every few hours;
    // scaled to a 45-candidate budget).
    s.info = {true, true, false};
    s.operators = {{Op::kMutate, 1.0}};
    s.population.kind = PolicyKind::kIslands;
    s.population.islands = 4;
    s.population.migration_interval = 10;
    s.population.reset_interval = 20;
    s.solutions_shown = 2;
    s.style = "funsearch";
  } else if (name == "ai-cuda-engineer") {
    // Sakana's AI CUDA Engineer (optimization stage): the best kernels with their times,
    // mutation and crossover of the top ones; an elite archive.
    s.info = {true, true, false};
    s.operators = {{Op::kMutate, 1.0}, {Op::kCrossover, 1.0}};
    s.population.kind = PolicyKind::kElite;
    s.solutions_shown = 3;
    s.style = "ai-cuda-engineer";
  } else if (name == "agent" || name == "evoengineer-agent") {
    // Each proposal an episode with kevo's tools; its first message is the preset's prompt.
    // agent: kevo-default's population (MAP-Elites) and operators; evoengineer-agent:
    // EvoEngineer-Full's information and elite. Fewer episodes in flight: each holds several
    // evaluations, and a budget of 45 candidates is about six episodes of up to 8 evaluations.
    auto base = preset(name == "agent" ? "kevo-default" : "evoengineer-full");
    if (!base) return base.unexpected();
    s = *base;
    s.name = std::string(name);
    s.mutator = Mutator::kAgent;
    s.repair_rounds = 0;  // an episode repairs its own failures
    s.parallel = 4;
  } else if (name == "kevo-default") {
    // Everything, plus what kevo adds: diff edits, repair of failures, MAP-Elites diversity.
    s.info = {true, true, true};
    s.operators = {{Op::kDiffEdit, 2.0}, {Op::kMutate, 1.0}, {Op::kCrossover, 1.0}, {Op::kRewrite, 0.5}};
    s.population.kind = PolicyKind::kMapElites;
    s.repair_rounds = 2;
    s.stagnation = 0;
    s.style = "kevo";
  } else if (name == "kevo-archive") {
    // kevo-default plus examples from the kernel archive: off by default until its effect on a
    // real model is measured (docs/SUITE.md, "The kernel archive").
    auto base = preset("kevo-default");
    if (!base) return base.unexpected();
    s = *base;
    s.name = std::string(name);
    s.info.archive = true;
  } else {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    return fail("unknown strategy '{}' (presets: {})", name, names);
  }
  return s;
}

nlohmann::json StrategyConfig::to_json() const {
  nlohmann::json ops = nlohmann::json::object();
  for (const auto& [op, w] : operators) ops[to_string(op)] = w;
  return {{"name", name},
          {"info", {{"task", info.task}, {"solutions", info.solutions}, {"insights", info.insights}, {"archive", info.archive}}},
          {"operators", ops},
          {"policy", to_string(population.kind)},
          {"population", population.size},
          {"islands", population.islands},
          {"migration_interval", population.migration_interval},
          {"reset_interval", population.reset_interval},
          {"migrants", population.migrants},
          {"solutions_shown", solutions_shown},
          {"insights_shown", insights_shown},
          {"archive_shown", archive_shown},
          {"repair_rounds", repair_rounds},
          {"parallel", parallel},
          {"max_candidates", max_candidates},
          {"stagnation", stagnation},
          {"verify_fallbacks", verify_fallbacks},
          {"profile_feedback", profile_feedback},
          {"style", style},
          {"mutator", to_string(mutator)},
          {"episode",
           {{"turns", episode.turns}, {"evaluations", episode.evaluations}, {"tokens", episode.tokens},
            {"minutes", episode.minutes}, {"speculate", episode.speculate}}}};
}

Result<StrategyConfig> StrategyConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return fail("strategy: not a JSON object");
  JsonFields f(j, "strategy");
  auto base = preset(f.get<std::string>("name", "kevo-default"));
  StrategyConfig s = base ? *base : StrategyConfig{};
  s.name = f.get("name", s.name);
  JsonFields info(f.object("info"), "strategy.info");
  s.info.task = info.get("task", true);
  s.info.solutions = info.get("solutions", false);
  s.info.insights = info.get("insights", false);
  s.info.archive = info.get("archive", false);
  KEVO_TRY(info.status());
  if (nlohmann::json ops = f.object("operators"); !ops.empty()) {
    s.operators.clear();
    JsonFields weights(ops, "strategy.operators");
    for (const auto& [k, v] : ops.items()) {
      auto op = parse_op(k);
      if (!op) return fail("{}", enum_unknown(kOpTexts, "operator", k));
      s.operators.emplace_back(*op, weights.get(k.c_str(), 0.0));
    }
    KEVO_TRY(weights.status());
  }
  const std::string policy_text = f.get("policy", std::string(to_string(s.population.kind)));
  auto policy = parse_policy(policy_text);
  if (!policy) return fail("{}", enum_unknown(kPolicyKindTexts, "population policy", policy_text));
  s.population.kind = *policy;
  s.population.size = f.get("population", s.population.size);
  s.population.islands = f.get("islands", s.population.islands);
  s.population.migration_interval = f.get("migration_interval", s.population.migration_interval);
  s.population.reset_interval = f.get("reset_interval", s.population.reset_interval);
  s.population.migrants = f.get("migrants", s.population.migrants);
  s.solutions_shown = f.get("solutions_shown", s.solutions_shown);
  s.insights_shown = f.get("insights_shown", s.insights_shown);
  s.archive_shown = f.get("archive_shown", s.archive_shown);
  s.repair_rounds = f.get("repair_rounds", s.repair_rounds);
  s.parallel = f.get("parallel", s.parallel);
  s.max_candidates = f.get("max_candidates", s.max_candidates);
  s.stagnation = f.get("stagnation", s.stagnation);
  s.verify_fallbacks = f.get("verify_fallbacks", s.verify_fallbacks);
  s.profile_feedback = f.get("profile_feedback", s.profile_feedback);
  s.style = f.get("style", s.style);
  const std::string mutator_text = f.get("mutator", std::string(to_string(s.mutator)));
  auto mutator = parse_mutator(mutator_text);
  if (!mutator) return fail("{}", enum_unknown(kMutatorTexts, "strategy.mutator", mutator_text));
  s.mutator = *mutator;
  JsonFields ep(f.object("episode"), "strategy.episode");
  s.episode.turns = ep.get("turns", s.episode.turns);
  s.episode.evaluations = ep.get("evaluations", s.episode.evaluations);
  s.episode.tokens = ep.get("tokens", s.episode.tokens);
  s.episode.minutes = ep.get("minutes", s.episode.minutes);
  s.episode.speculate = ep.get("speculate", s.episode.speculate);
  KEVO_TRY(ep.status());
  KEVO_TRY(f.status());
  return s;
}

namespace {

// The agent keys of [evolve]: nullopt when `k` is none of them.
std::optional<Status> parse_agent_key(const std::string& k, const toml::node& node, StrategyConfig& s) {
  const auto line = node.source().begin.line;
  if (k == "mutator") {
    const std::string text = node.value<std::string>().value_or("");
    auto m = parse_mutator(text);
    if (!m) return fail("config line {}: {}", line, enum_unknown(kMutatorTexts, "evolve.mutator", text));
    s.mutator = *m;
    return Status{};
  }
  auto positive = [&](auto& out) -> Status {
    auto v = node.value<double>();
    if (!v || *v <= 0) return fail("config line {}: evolve.{} must be a number > 0", line, k);
    out = static_cast<std::remove_reference_t<decltype(out)>>(*v);
    return {};
  };
  if (k == "episode_turns") return positive(s.episode.turns);
  if (k == "episode_evaluations") return positive(s.episode.evaluations);
  if (k == "episode_tokens") return positive(s.episode.tokens);
  if (k == "episode_minutes") return positive(s.episode.minutes);
  if (k == "episode_speculate") {
    if (!node.is_boolean()) return fail("config line {}: evolve.episode_speculate must be true or false", line);
    s.episode.speculate = *node.value<bool>();
    return Status{};
  }
  return std::nullopt;
}

}  // namespace

Result<StrategyConfig> parse_strategy_toml(std::string_view text, StrategyConfig base) {
  toml::table root;
  if (auto bad = find_toml_hazard(text))
    return fail("config line {}: {}", bad->line, describe(bad->kind));
  try {  // toml++ reports syntax errors by exception; turned into a value right here
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return fail("config line {}: {}", e.source().begin.line, e.description());
  }
  const toml::table* ev = root["evolve"].as_table();
  if (!ev) return base;
  StrategyConfig s = base;
  if (auto name = (*ev)["strategy"].value<std::string>()) {
    auto p = preset(*name);
    if (!p) return p.unexpected();
    s = *p;
  }
  for (const auto& entry : *ev) {
    // Not a structured binding: the lambdas below capture it (clang accepts that from 16 only).
    const toml::node& node = entry.second;
    std::string k(entry.first.str());
    auto line = node.source().begin.line;
    auto need_int = [&](int& out) -> Status {
      auto v = node.value<int64_t>();
      if (!v) return fail("config line {}: evolve.{} must be an integer", line, k);
      out = static_cast<int>(*v);
      return {};
    };
    if (k == "strategy") continue;
    if (k == "parallel") KEVO_TRY(need_int(s.parallel));
    else if (k == "population") KEVO_TRY(need_int(s.population.size));
    else if (k == "islands") KEVO_TRY(need_int(s.population.islands));
    else if (k == "migration_interval") KEVO_TRY(need_int(s.population.migration_interval));
    else if (k == "reset_interval") KEVO_TRY(need_int(s.population.reset_interval));
    else if (k == "migrants") KEVO_TRY(need_int(s.population.migrants));
    else if (k == "repair_rounds") KEVO_TRY(need_int(s.repair_rounds));
    else if (k == "stagnation") KEVO_TRY(need_int(s.stagnation));
    else if (k == "max_candidates") KEVO_TRY(need_int(s.max_candidates));
    else if (k == "solutions_shown") KEVO_TRY(need_int(s.solutions_shown));
    else if (k == "insights_shown") KEVO_TRY(need_int(s.insights_shown));
    else if (k == "archive_shown") KEVO_TRY(need_int(s.archive_shown));
    else if (k == "verify_fallbacks") KEVO_TRY(need_int(s.verify_fallbacks));
    else if (k == "profile_feedback") {
      if (!node.is_boolean()) return fail("config line {}: evolve.profile_feedback must be true or false", line);
      s.profile_feedback = *node.value<bool>();
    } else if (k == "policy") {
      const std::string text = node.value<std::string>().value_or("");
      auto p = parse_policy(text);
      if (!p) return fail("config line {}: {}", line, enum_unknown(kPolicyKindTexts, "population policy", text));
      s.population.kind = *p;
    } else if (k == "style") {
      s.style = node.value<std::string>().value_or(s.style);
    } else if (k == "info") {
      const toml::array* a = node.as_array();
      if (!a) return fail("config line {}: evolve.info must be a list of task/solutions/insights/archive", line);
      s.info = {false, false, false};
      for (const auto& e : *a) {
        auto v = e.value<std::string>().value_or("");
        if (v == "task") s.info.task = true;
        else if (v == "solutions") s.info.solutions = true;
        else if (v == "insights") s.info.insights = true;
        else if (v == "archive") s.info.archive = true;
        else return fail("config line {}: evolve.info: unknown source '{}'", line, v);
      }
    } else if (k == "operators") {
      const toml::table* t = node.as_table();
      if (!t) return fail("config line {}: evolve.operators must be a table of weights", line);
      s.operators.clear();
      for (const auto& [ok, ov] : *t) {
        auto op = parse_op(ok.str());
        if (!op) return fail("config line {}: {}", line, enum_unknown(kOpTexts, "operator", ok.str()));
        auto w = ov.value<double>();
        if (!w || *w < 0) return fail("config line {}: operator weight must be a number >= 0", line);
        s.operators.emplace_back(*op, *w);
      }
    } else if (auto agent = parse_agent_key(k, node, s)) {
      KEVO_TRY(*agent);
    } else {
      return fail("config line {}: unknown key evolve.{}", line, k);
    }
  }
  if (s.parallel < 1 || s.population.size < 1 || s.max_candidates < 1)
    return fail("config: evolve.parallel, population and max_candidates must be >= 1");
  return s;
}

Result<bool> toml_has_table(const std::filesystem::path& file, const std::string& name) {
  std::ifstream in(file);
  if (!in) return fail("{}: cannot read", file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  if (auto bad = find_toml_hazard(ss.str()))
    return fail("{} line {}: {}", file.string(), bad->line, describe(bad->kind));
  try {
    toml::table t = toml::parse(ss.str());
    return t[name].is_table();
  } catch (const toml::parse_error& e) {
    return fail("{} line {}: {}", file.string(), e.source().begin.line, e.description());
  }
}

Result<StrategyConfig> load_strategy_file(const std::filesystem::path& file, StrategyConfig base) {
  std::ifstream in(file);
  if (!in) return fail("{}: cannot read", file.string());
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse_strategy_toml(ss.str(), std::move(base));
  if (!r) return fail("{}: {}", file.string(), r.error().message);
  return r;
}

}  // namespace kevo::evolve
