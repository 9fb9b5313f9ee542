#include "llm/config.h"

#include <toml++/toml.h>

#include <optional>
#include <sstream>

#include "llm/errors.h"
#include "util/enum_text.h"
#include "util/fs.h"
#include "util/toml_text.h"

namespace kevo::llm {

const char* to_string(CacheMode m) { return enum_text(kCacheModeTexts, m, "cache"); }

std::optional<CacheMode> parse_cache_mode(std::string_view s) { return enum_parse(kCacheModeTexts, s); }

ModelOptions LlmConfig::options_for(const std::string& spec) const {
  ModelOptions o = defaults;
  auto it = per_model.find(spec);
  if (it == per_model.end()) return o;
  const ModelOptions& m = it->second;
  if (m.temperature) o.temperature = m.temperature;
  if (m.max_tokens) o.max_tokens = m.max_tokens;
  if (m.reasoning_effort) o.reasoning_effort = m.reasoning_effort;
  if (m.thinking_budget) o.thinking_budget = m.thinking_budget;
  if (m.system_prompt) o.system_prompt = m.system_prompt;
  return o;
}

LlmConfig default_config() {
  LlmConfig c;
  auto add = [&](ProviderConfig p) { c.providers[p.name] = p; };
  add({.name = "openai", .base_url = "https://api.openai.com/v1", .api_key_env = "OPENAI_API_KEY",
       .max_tokens_field = "max_completion_tokens"});
  add({.name = "anthropic", .protocol = Protocol::kAnthropic,
       .base_url = "https://api.anthropic.com/v1", .api_key_env = "ANTHROPIC_API_KEY"});
  add({.name = "deepseek", .base_url = "https://api.deepseek.com", .api_key_env = "DEEPSEEK_API_KEY"});
  add({.name = "openrouter", .base_url = "https://openrouter.ai/api/v1",
       .api_key_env = "OPENROUTER_API_KEY"});
  add({.name = "ollama", .base_url = "http://localhost:11434/v1", .api_key_env = "",
       .key_required = false, .max_concurrency = 1, .local = true});
  return c;
}

namespace {

// [llm.providers.NAME] protocol.
constexpr EnumText<Protocol> kProtocolTexts[] = {{Protocol::kOpenAI, "openai"}, {Protocol::kAnthropic, "anthropic"}};

Error config_error(std::string_view where, std::string_view what) {
  return make_error(ErrorKind::kFatal, fmt::format("llm config: {}: {}", where, what));
}

// Typed getters that reject a wrong type instead of silently ignoring the key.
template <class T>
Status get(const toml::node& n, std::string_view key, T& out) {
  if constexpr (std::is_same_v<T, double>) {
    if (auto v = n.value<double>()) { out = *v; return {}; }
    return config_error(key, "expected a number");
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int>) {
    if (auto v = n.as_integer()) { out = static_cast<T>(v->get()); return {}; }
    return config_error(key, "expected an integer");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (auto v = n.as_boolean()) { out = v->get(); return {}; }
    return config_error(key, "expected true or false");
  } else {
    if (auto v = n.as_string()) { out = v->get(); return {}; }
    return config_error(key, "expected a string");
  }
}

template <class T>
Status get_opt(const toml::node& n, std::string_view key, std::optional<T>& out) {
  T v{};
  KEVO_TRY(get(n, key, v));
  out = v;
  return {};
}

Status apply_options(const toml::table& t, std::string_view where, ModelOptions& o,
                     bool allow_other_keys) {
  for (const auto& [k, n] : t) {
    std::string key(k.str());
    if (key == "temperature") KEVO_TRY(get_opt(n, key, o.temperature));
    else if (key == "max_tokens") KEVO_TRY(get_opt(n, key, o.max_tokens));
    else if (key == "reasoning_effort") KEVO_TRY(get_opt(n, key, o.reasoning_effort));
    else if (key == "thinking_budget") KEVO_TRY(get_opt(n, key, o.thinking_budget));
    else if (key == "system_prompt") KEVO_TRY(get_opt(n, key, o.system_prompt));
    else if (!allow_other_keys) return config_error(where, fmt::format("unknown key '{}'", key));
  }
  return {};
}

Status apply_provider(const std::string& name, const toml::table& t, LlmConfig& cfg) {
  auto [it, inserted] = cfg.providers.try_emplace(name);
  ProviderConfig& p = it->second;
  if (inserted) p.name = name;
  std::string where = "providers." + name;
  bool key_required_set = false;
  for (const auto& [k, n] : t) {
    std::string key(k.str());
    if (key == "protocol") {
      std::string proto;
      KEVO_TRY(get(n, key, proto));
      const auto protocol = enum_parse(kProtocolTexts, proto);
      if (!protocol) return config_error(where, "protocol must be \"openai\" or \"anthropic\"");
      p.protocol = *protocol;
    } else if (key == "base_url") {
      KEVO_TRY(get(n, key, p.base_url));
      while (p.base_url.ends_with('/')) p.base_url.pop_back();
    } else if (key == "api_key_env") KEVO_TRY(get(n, key, p.api_key_env));
    else if (key == "key_required") { KEVO_TRY(get(n, key, p.key_required)); key_required_set = true; }
    else if (key == "max_concurrency") KEVO_TRY(get(n, key, p.max_concurrency));
    else if (key == "max_tokens_field") KEVO_TRY(get(n, key, p.max_tokens_field));
    else if (key == "local") KEVO_TRY(get(n, key, p.local));
    else if (key == "api_key")
      return config_error(where, "keys are not read from the config file; name an environment "
                                 "variable with api_key_env, or use a key file");
    else return config_error(where, fmt::format("unknown key '{}'", key));
  }
  if (inserted && !key_required_set) p.key_required = !p.api_key_env.empty();
  if (p.base_url.empty()) return config_error(where, "base_url is required");
  if (p.max_concurrency < 1) return config_error(where, "max_concurrency must be at least 1");
  return {};
}

Status apply_table(const toml::table& t, LlmConfig& cfg) {
  auto& r = cfg.retry;
  for (const auto& [k, n] : t) {
    std::string key(k.str());
    if (key == "models") {
      cfg.models.clear();
      if (auto s = n.as_string()) { cfg.models.push_back(s->get()); continue; }
      auto arr = n.as_array();
      if (!arr) return config_error(key, "expected a model spec or a list of them");
      for (const auto& e : *arr) {
        auto s = e.as_string();
        if (!s) return config_error(key, "expected strings");
        cfg.models.push_back(s->get());
      }
    } else if (key == "weights") {
      cfg.weights.clear();
      auto arr = n.as_array();
      if (!arr) return config_error(key, "expected a list of numbers");
      for (const auto& e : *arr) {
        auto v = e.value<double>();
        if (!v || *v < 0) return config_error(key, "expected non-negative numbers");
        cfg.weights.push_back(*v);
      }
    } else if (key == "selection") {
      KEVO_TRY(get(n, key, cfg.selection));
      if (cfg.selection != "weighted" && cfg.selection != "thompson" && cfg.selection != "ucb")
        return config_error(key, "expected \"weighted\", \"thompson\" or \"ucb\"");
    } else if (key == "temperature" || key == "max_tokens" || key == "reasoning_effort" ||
               key == "thinking_budget" || key == "system_prompt") {
      toml::table one;
      one.insert(key, n);
      KEVO_TRY(apply_options(one, key, cfg.defaults, false));
    } else if (key == "connect_timeout_s") KEVO_TRY(get(n, key, cfg.connect_timeout_s));
    else if (key == "timeout_s") KEVO_TRY(get(n, key, cfg.timeout_s));
    else if (key == "max_response_bytes") {
      KEVO_TRY(get(n, key, cfg.max_response_bytes));
      if (cfg.max_response_bytes < 1024) return config_error(key, "expected at least 1024 (bytes)");
    }
    else if (key == "max_attempts") KEVO_TRY(get(n, key, r.max_attempts));
    else if (key == "backoff_base_s") KEVO_TRY(get(n, key, r.base_delay_s));
    else if (key == "backoff_max_s") KEVO_TRY(get(n, key, r.max_delay_s));
    else if (key == "max_retry_after_s") KEVO_TRY(get(n, key, r.max_retry_after_s));
    else if (key == "cache" || key == "mode") {
      std::string m;
      KEVO_TRY(get(n, key, m));
      auto mode = parse_cache_mode(m);
      if (!mode) return make_error(ErrorKind::kFatal, enum_unknown(kCacheModeTexts, "LLM mode", m));
      cfg.cache = *mode;
    } else if (key == "key_file") KEVO_TRY(get(n, key, cfg.key_file));
    else if (key == "api_key") {
      return config_error(key, "keys are not read from the config file; use environment "
                               "variables or key_file");
    } else if (key == "budget") {
      auto bt = n.as_table();
      if (!bt) return config_error(key, "expected a table");
      for (const auto& [bk, bn] : *bt) {
        std::string b(bk.str());
        if (b == "max_calls") KEVO_TRY(get_opt(bn, b, cfg.budget.max_calls));
        else if (b == "max_tokens") KEVO_TRY(get_opt(bn, b, cfg.budget.max_tokens));
        else if (b == "max_cost_usd") KEVO_TRY(get_opt(bn, b, cfg.budget.max_cost_usd));
        else return config_error("budget", fmt::format("unknown key '{}'", b));
      }
    } else if (key == "providers") {
      auto pt = n.as_table();
      if (!pt) return config_error(key, "expected a table of providers");
      for (const auto& [pk, pn] : *pt) {
        auto one = pn.as_table();
        if (!one) return config_error(key, "expected [llm.providers.NAME] tables");
        KEVO_TRY(apply_provider(std::string(pk.str()), *one, cfg));
      }
    } else if (key == "prices") {
      auto pt = n.as_table();
      if (!pt) return config_error(key, "expected a table of prices");
      for (const auto& [pk, pn] : *pt) {
        auto one = pn.as_table();
        if (!one) return config_error(key, "expected [llm.prices.\"MODEL\"] tables");
        Price& price = cfg.prices[std::string(pk.str())];
        for (const auto& [fk, fn] : *one) {
          std::string f(fk.str());
          if (f == "input") KEVO_TRY(get(fn, f, price.input_per_mtok));
          else if (f == "output") KEVO_TRY(get(fn, f, price.output_per_mtok));
          else if (f == "cached_input") KEVO_TRY(get_opt(fn, f, price.cached_input_per_mtok));
          else return config_error("prices", fmt::format("unknown key '{}' (input, output, "
                                                         "cached_input: USD per 1M tokens)", f));
        }
      }
    } else if (key == "options") {
      auto ot = n.as_table();
      if (!ot) return config_error(key, "expected a table of per-model options");
      for (const auto& [mk, mn] : *ot) {
        auto one = mn.as_table();
        if (!one) return config_error(key, "expected [llm.options.\"SPEC\"] tables");
        std::string spec(mk.str());
        KEVO_TRY(apply_options(*one, "options." + spec, cfg.per_model[spec], false));
      }
    } else {
      return config_error(key, "unknown key");
    }
  }
  if (r.max_attempts < 1) return config_error("max_attempts", "must be at least 1");
  return {};
}

Result<toml::table> parse_toml(std::string_view text, std::string_view source) {
  if (auto bad = find_toml_hazard(text))
    return make_error(ErrorKind::kFatal, fmt::format("llm config: {} line {}, column {}: {}", source,
                                                     bad->line, bad->column, describe(bad->kind)));
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << e;
    return make_error(ErrorKind::kFatal, fmt::format("llm config: {}", os.str()));
  }
}

}  // namespace

Result<LlmConfig> parse_config(std::string_view toml_text, LlmConfig base) {
  auto t = parse_toml(toml_text, "llm config");
  if (!t) return t.unexpected();
  const toml::table* root = &*t;
  if (auto llm = t->get("llm")) {
    root = llm->as_table();
    if (!root) return config_error("llm", "expected a table");
  }
  KEVO_TRY(apply_table(*root, base));
  return base;
}

Result<LlmConfig> load_config(const std::filesystem::path& path, LlmConfig base) {
  auto text = read_file(path);
  if (!text) return make_error(ErrorKind::kFatal, text.error().message);
  auto t = parse_toml(*text, path.string());
  if (!t) return t.unexpected();
  const toml::table* root = &*t;
  if (auto llm = t->get("llm")) {
    root = llm->as_table();
    if (!root) return config_error("llm", "expected a table");
  } else {
    // A shared run config may hold other sections; without [llm] only LLM keys are allowed.
  }
  KEVO_TRY(apply_table(*root, base));
  return base;
}

Status apply_override(LlmConfig& cfg, std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return make_error(ErrorKind::kFatal,
                      fmt::format("override '{}' is not KEY=VALUE", assignment));
  std::string key(assignment.substr(0, eq));
  std::string value(assignment.substr(eq + 1));
  // A TOML value as written ("5", "true", "[\"a\", \"b\"]"), unless it is not one or is text
  // toml++ must not see (util/toml_text.h); then it is quoted below like any bare word.
  std::string line = key + " = " + value;
  std::optional<toml::table> parsed;
  if (!find_toml_hazard(line)) {
    try {
      parsed = toml::parse(line);
    } catch (const toml::parse_error&) {
    }
  }
  Result<toml::table> t = Error{};
  if (parsed) {
    t = std::move(*parsed);
  } else {
    std::string quoted = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    quoted += '"';
    t = parse_toml(key + " = " + quoted, "command line");
  }
  if (!t) return t.unexpected();
  return apply_table(*t, cfg);
}

}  // namespace kevo::llm
