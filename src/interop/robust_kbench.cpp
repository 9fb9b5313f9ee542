#include "interop/robust_kbench.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "interop/export.h"
#include "task/task.h"
#include "util/fs.h"

namespace kevo::interop {
namespace fs = std::filesystem;

namespace {

// Names the wrapper itself binds at top level: a setting of that name would replace them.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names{"Model", "get_inputs", "get_init_inputs", "forward_fn", "torch",
                                           "nn", "F", "inspect", "AutogradFunction", "input_names"};
  return names;
}

bool python_keyword(const std::string& s) {
  static const std::set<std::string> kw{"False", "None", "True", "and", "as", "assert", "async", "await",
                                        "break", "class", "continue", "def", "del", "elif", "else", "except",
                                        "finally", "for", "from", "global", "if", "import", "in", "is",
                                        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                        "while", "with", "yield"};
  return kw.count(s) > 0;
}

// One entry of a single_*/multi_* list: an object of scalar settings with Python-identifier keys.
Result<RkbSettings> entry_settings(const torch::ojson& e, const std::string& where) {
  if (!e.is_object()) return fail(ErrorCode::kParse, "{}: must be a JSON object of settings", where);
  RkbSettings out;
  for (const auto& [k, v] : e.items()) {
    if (!is_identifier(k) || python_keyword(k) || k.rfind("_kevo", 0) == 0 || reserved_names().count(k))
      return fail(ErrorCode::kParse, "{}: setting '{}' is not a usable Python parameter name", where,
                  cpp_escape(k));
    if (v.is_object() || v.is_array())
      return fail(ErrorCode::kParse, "{}: setting '{}' must be a number, string, boolean or null", where,
                  k);
    out.emplace_back(k, v);
  }
  return out;
}

// The entries of one list; a missing list is one empty configuration.
Result<std::vector<RkbSettings>> list_settings(const torch::ojson& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) return std::vector<RkbSettings>{RkbSettings{}};
  const torch::ojson& l = j[key];
  if (!l.is_array()) return fail(ErrorCode::kParse, "{}: '{}' must be a list of objects", where, key);
  std::vector<RkbSettings> out;
  for (size_t i = 0; i < l.size(); ++i) {
    auto s = entry_settings(l[i], fmt::format("{}: {}[{}]", where, key, i));
    if (!s) return s.unexpected();
    out.push_back(std::move(*s));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

// Later parts override earlier ones (robust-kbench: shared keys override input and init keys).
RkbSettings merge(const std::vector<const RkbSettings*>& parts) {
  RkbSettings out;
  for (const RkbSettings* p : parts)
    for (const auto& [key, v] : *p) {
      const std::string& k = key;
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == k; });
      if (it != out.end())
        it->second = v;
      else
        out.emplace_back(k, v);
    }
  return out;
}

std::string python_literal(const torch::ojson& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  return v.dump();  // JSON numbers and strings (ASCII-escaped) are Python literals too
}

}  // namespace

const torch::ojson* rkb_setting(const RkbSettings& s, const std::string& key) {
  for (const auto& [k, v] : s)
    if (k == key) return &v;
  return nullptr;
}

Result<RkbConfigs> parse_rkb_configs(const std::string& json_text, const std::string& where) {
  torch::ojson j = torch::ojson::parse(json_text, nullptr, false);
  if (j.is_discarded()) return fail(ErrorCode::kParse, "{}: not valid JSON", where);
  if (!j.is_object()) return fail(ErrorCode::kParse, "{}: must hold a JSON object", where);
  std::vector<std::vector<RkbSettings>> single, multi;
  for (const char* part : {"input", "init", "shared"}) {
    auto s = list_settings(j, fmt::format("single_{}_configs", part), where);
    if (!s) return s.unexpected();
    single.push_back(std::move(*s));
    auto m = list_settings(j, fmt::format("multi_{}_configs", part), where);
    if (!m) return m.unexpected();
    multi.push_back(std::move(*m));
  }
  RkbConfigs out;
  out.main = merge({&single[0][0], &single[1][0], &single[2][0]});
  for (const auto& in : multi[0])
    for (const auto& init : multi[1])
      for (const auto& shared : multi[2]) {
        RkbSettings s = merge({&in, &init, &shared});
        if (std::find(out.multi.begin(), out.multi.end(), s) == out.multi.end()) out.multi.push_back(std::move(s));
      }
  return out;
}

Result<std::vector<fs::path>> robust_kbench_folders(const std::vector<std::string>& args) {
  std::vector<fs::path> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec))
      return fail(ErrorCode::kNotFound,
                  "{}: not a folder (a robust-kbench task folder or a folder of them)", a);
    if (fs::exists(fs::path(a) / "func_forward.py", ec)) {
      out.emplace_back(a);
      continue;
    }
    std::vector<fs::path> tasks;
    for (const auto& e : fs::directory_iterator(a, ec))
      if (e.is_directory(ec) && fs::exists(e.path() / "func_forward.py", ec)) tasks.push_back(e.path());
    if (ec) return fail("{}: cannot list: {}", a, ec.message());
    if (tasks.empty()) return fail("{}: holds no robust-kbench task folder (none has a func_forward.py)", a);
    std::sort(tasks.begin(), tasks.end());
    out.insert(out.end(), tasks.begin(), tasks.end());
  }
  return out;
}

Result<RkbFolder> read_robust_kbench(const fs::path& dir) {
  RkbFolder f;
  f.dir = dir;
  std::error_code ec;
  auto fwd = read_file(dir / "func_forward.py");
  if (!fwd)
    return fail(fwd.error().code, "{}: not a robust-kbench task folder: {}", dir.string(),
                fwd.error().message);
  if (fwd->find("get_inputs") == std::string::npos || fwd->find("class Model") == std::string::npos)
    return fail(ErrorCode::kParse, "{}: defines no Model class or no get_inputs()",
                (dir / "func_forward.py").string());
  f.forward_source = *fwd;
  auto configs = [&](const fs::path& p) -> Result<RkbConfigs> {
    auto text = read_file(p);
    if (!text) return fail(text.error().code, "{}: {}", p.string(), text.error().message);
    return parse_rkb_configs(*text, p.string());
  };
  auto cf = configs(dir / "config_forward.json");
  if (!cf) return cf.unexpected();
  f.forward = *cf;
  if (fs::exists(dir / "func_backward.py", ec)) {
    auto bwd = read_file(dir / "func_backward.py");
    if (!bwd) return bwd.unexpected();
    f.backward_source = *bwd;
    fs::path cb = dir / "config_backward.json";
    auto bc = fs::exists(cb, ec) ? configs(cb) : Result<RkbConfigs>(*cf);
    if (!bc) return bc.unexpected();
    f.backward = *bc;
  }
  return f;
}

std::string rkb_reference_source(const std::string& module_source, const RkbSettings& settings,
                                 const std::string& label) {
  std::string s = module_source;
  if (!s.empty() && s.back() != '\n') s += '\n';
  // The label (a folder's name) goes into a comment: a line break in it would start code.
  std::string safe_label = label;
  for (char& c : safe_label)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  s += fmt::format(
      "\n\n# ---- added by `kevo import robust-kbench` ({}) ----\n"
      "# The configuration's settings as top-level names: kevo varies the integer ones (the task's\n"
      "# sizes); Model and get_inputs below pass each to the parameter of that name.\n",
      safe_label);
  std::string names;
  for (const auto& [k, v] : settings) {
    s += fmt::format("{} = {}\n", k, python_literal(v));
    names += fmt::format("\"{}\", ", k);
  }
  s += fmt::format(R"PY(
import inspect as _kevo_inspect

_KEVO_SETTINGS = ({})
_kevo_robust_kbench_inputs = get_inputs
_kevo_robust_kbench_init = Model.__init__


def _kevo_settings_for(fn):
    params = _kevo_inspect.signature(fn).parameters
    takes_all = any(p.kind == p.VAR_KEYWORD for p in params.values())
    return {{k: globals()[k] for k in _KEVO_SETTINGS if takes_all or k in params}}


def get_init_inputs():
    # Positional, as kevo builds Model(*get_init_inputs()): each parameter's setting, else its
    # default. Model itself stays robust-kbench's class (its methods name it: super(Model, self)).
    out = []
    for p in _kevo_inspect.signature(_kevo_robust_kbench_init).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind == p.KEYWORD_ONLY:
            if p.name in _KEVO_SETTINGS:
                raise TypeError(f"Model.__init__: setting '{{p.name}}' is a keyword-only parameter")
            continue
        if p.name in _KEVO_SETTINGS:
            out.append(globals()[p.name])
        elif p.default is not p.empty:
            out.append(p.default)
        else:
            raise TypeError(f"Model.__init__: no setting for its parameter '{{p.name}}'")
    return out


def get_inputs():
    return _kevo_robust_kbench_inputs(**_kevo_settings_for(_kevo_robust_kbench_inputs))
)PY",
                   names);
  return s;
}

std::vector<std::string> rkb_saved_names(const std::string& backward_source, std::vector<std::string>* params) {
  auto names_in = [](const std::string& list) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= list.size()) {
      size_t comma = list.find(',', at);
      std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      item = item.substr(0, item.find_first_of(":="));  // annotation, default
      size_t b = item.find_first_not_of(" \t\n\r"), e = item.find_last_not_of(" \t\n\r");
      if (b != std::string::npos) item = item.substr(b, e - b + 1);
      if (is_identifier(item)) out.push_back(item);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    return out;
  };
  auto call_args = [&](const std::string& opener) -> std::optional<std::vector<std::string>> {
    size_t at = backward_source.find(opener);
    if (at == std::string::npos) return std::nullopt;
    at += opener.size();
    size_t close = backward_source.find(')', at);
    if (close == std::string::npos) return std::nullopt;
    return names_in(backward_source.substr(at, close - at));
  };
  auto saved = call_args("save_for_backward(");
  auto fwd = call_args("def forward(ctx");
  if (!saved || !fwd) return {};
  if (params) *params = *fwd;
  return *saved;
}

std::string rkb_backward_source(const std::string& forward_reference, const RkbBackwardSignature& sig) {
  return backward_module_source(
      forward_reference, sig,
      "# ---- the backward pass (`kevo import robust-kbench`) ----\n"
      "# Gradients by torch.autograd through the forward above: of every floating-point tensor argument,\n"
      "# then of every parameter. Inputs: the forward's arguments, the parameters robust-kbench's\n"
      "# func_backward.py saves, then the incoming gradient of each forward output. Its backward_fn is\n"
      "# what a kernel fills in.\n");
}

}  // namespace kevo::interop
