#include "task/task.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "task/limits.h"
#include "task/resolved.h"
#include "util/edit_distance.h"
#include "util/fs.h"
#include "util/toml_text.h"

namespace kevo {
namespace fs = std::filesystem;

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

Tolerance Task::tolerance_for(DType t) const {
  auto it = tolerance.find(t);
  if (it != tolerance.end()) return it->second;
  if (t == DType::F16 || t == DType::BF16) return {1e-2, 1e-2};
  if (t == DType::F32) return {1e-4, 1e-4};
  return {0, 0};
}

Result<std::vector<int64_t>> Task::shape_of(const TensorSpec& t, const Config& c) const {
  std::vector<int64_t> shape;
  for (const auto& e : t.shape) {
    auto v = eval_int_expr(e, c.dims);
    if (!v)
      return fail(ErrorCode::kParse, "{}: config '{}': shape of '{}': {}", name, c.name, t.name,
                  v.error().message);
    if (*v <= 0)
      return fail(ErrorCode::kParse, "{}: config '{}': shape of '{}': \"{}\" = {} is not positive",
                  name, c.name, t.name, e, *v);
    shape.push_back(*v);
  }
  return shape;
}

bool Task::has_baseline() const {
  if (baseline_is_torch_model) return true;
  std::error_code ec;
  return fs::exists(baseline_path(), ec);
}

bool Task::has_cpu_reference() const {
  std::error_code ec;
  return fs::exists(reference_path(), ec);
}

std::vector<int64_t> Task::dim_values(const Config& c) const {
  std::vector<int64_t> v;
  for (const auto& d : dims) v.push_back(c.dims.at(d));
  return v;
}

namespace {

constexpr const char* kIdentifierRule =
    "a C identifier: a letter or _, then letters, digits or _, at most 64 characters";

// A name as the error message shows it: printable ASCII, the rest escaped, at most 80 characters.
std::string escaped(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') out += c;
    else out += fmt::format("\\x{:02x}", u);
  }
  return s.size() > 80 ? out + "..." : out;
}

// Builds "file:line:col: field: message" from a node's source position (ErrorCode::kParse).
class Ctx {
 public:
  explicit Ctx(fs::path file) : file_(std::move(file)) {}
  template <class... A>
  Unexpected err(const toml::node* n, std::string_view field, fmt::format_string<A...> f, A&&... a) const {
    std::string where = file_.string();
    if (n && n->source().begin.line)
      where += fmt::format(":{}:{}", n->source().begin.line, n->source().begin.column);
    return fail(ErrorCode::kParse, "{}: {}: {}", where, field,
                fmt::format(f, std::forward<A>(a)...));
  }
  const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

Result<std::string> get_string(const Ctx& ctx, const toml::table& t, std::string_view key,
                               std::string_view field, std::optional<std::string> def = {}) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (def) return *def;
    return ctx.err(&t, field, "missing (required)");
  }
  if (auto s = n->value<std::string>()) return *s;
  return ctx.err(n, field, "must be a string");
}

Result<double> get_number(const Ctx& ctx, const toml::table& t, std::string_view key,
                          std::string_view field, std::optional<double> def = {}) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (def) return *def;
    return ctx.err(&t, field, "missing (required)");
  }
  if (n->is_integer() || n->is_floating_point()) return *n->value<double>();
  return ctx.err(n, field, "must be a number");
}

Result<bool> get_bool(const Ctx& ctx, const toml::table& t, std::string_view key,
                      std::string_view field, bool def) {
  const toml::node* n = t.get(key);
  if (!n) return def;
  if (auto b = n->value<bool>()) return *b;
  return ctx.err(n, field, "must be true or false");
}

// A number or an expression string, kept as expression text.
Result<std::string> get_expr(const Ctx& ctx, const toml::node* n, std::string_view field) {
  if (n->is_integer()) return std::to_string(*n->value<int64_t>());
  if (n->is_floating_point()) return fmt::format("{}", *n->value<double>());
  if (auto s = n->value<std::string>()) {
    auto names = expr_names(*s);
    if (!names) return ctx.err(n, field, "{}", names.error().message);
    return *s;
  }
  return ctx.err(n, field, "must be a number or an expression string");
}

const std::set<std::string> kKnownTop = {"name",      "category", "description", "dims",
                                         "flops",     "bytes",    "libraries",   "inplace",
                                         "workspace", "oracle",   "inputs",      "outputs",
                                         "scalars",   "configs",  "tolerance",
                                         "torch_reference", "torch_baseline", "backward"};

Status check_unknown_keys(const Ctx& ctx, const toml::table& t, const std::set<std::string>& known,
                          std::string_view where) {
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (!known.count(key)) {
      std::string list;
      for (const auto& s : known) list += (list.empty() ? "" : ", ") + s;
      const std::string near = closest_name(key, std::vector<std::string>(known.begin(), known.end()));
      if (!near.empty())
        return ctx.err(&v, fmt::format("{}{}", where, key), "unknown key (did you mean '{}'? known: {})", near, list);
      return ctx.err(&v, fmt::format("{}{}", where, key), "unknown key (known: {})", list);
    }
  }
  return {};
}

Result<InitSpec> parse_init(const Ctx& ctx, const toml::node* n, std::string_view field,
                            DType dtype) {
  InitSpec s;
  s.wide = is_float(dtype);
  if (!n) {
    if (!is_float(dtype))
      return ctx.err(nullptr, field, "integer tensors need an init = {{ dist = \"int\", low, high }}");
    return s;
  }
  const toml::table* t = n->as_table();
  if (!t) return ctx.err(n, field, "must be a table like {{ dist = \"normal\", std = 1.0 }}");
  auto dist = get_string(ctx, *t, "dist", fmt::format("{}.dist", field));
  if (!dist) return dist.unexpected();
  std::string f = std::string(field);
  auto num = [&](std::string_view k, double def) {
    return get_number(ctx, *t, k, fmt::format("{}.{}", f, k), def);
  };
  std::set<std::string> allowed = {"dist"};
  if (*dist == "normal" || *dist == "lognormal") {
    s.dist = *dist == "normal" ? Dist::Normal : Dist::LogNormal;
    auto m = num("mean", 0), sd = num("std", 1);
    if (!m) return m.unexpected();
    if (!sd) return sd.unexpected();
    if (*sd <= 0) return ctx.err(t->get("std"), f + ".std", "must be positive");
    s.a = *m, s.b = *sd;
    allowed.insert({"mean", "std"});
  } else if (*dist == "uniform") {
    s.dist = Dist::Uniform;
    auto lo = num("low", 0), hi = num("high", 1);
    if (!lo) return lo.unexpected();
    if (!hi) return hi.unexpected();
    if (!(*hi > *lo)) return ctx.err(n, f, "uniform needs low < high (got {} and {})", *lo, *hi);
    s.a = *lo, s.b = *hi;
    allowed.insert({"low", "high"});
  } else if (*dist == "laplace") {
    s.dist = Dist::Laplace;
    auto l = num("loc", 0), sc = num("scale", 1);
    if (!l) return l.unexpected();
    if (!sc) return sc.unexpected();
    if (*sc <= 0) return ctx.err(t->get("scale"), f + ".scale", "must be positive");
    s.a = *l, s.b = *sc;
    allowed.insert({"loc", "scale"});
  } else if (*dist == "exponential") {
    s.dist = Dist::Exponential;
    auto r = num("rate", 1);
    if (!r) return r.unexpected();
    if (*r <= 0) return ctx.err(t->get("rate"), f + ".rate", "must be positive");
    s.a = *r;
    allowed.insert("rate");
  } else if (*dist == "int") {
    s.dist = Dist::Int;
    s.wide = false;
    for (const char* k : {"low", "high"}) {
      const toml::node* b = t->get(k);
      if (!b) return ctx.err(n, f + "." + k, "missing (int needs low and high, high exclusive)");
      auto e = get_expr(ctx, b, f + "." + k);
      if (!e) return e.unexpected();
      (std::string_view(k) == "low" ? s.low_expr : s.high_expr) = *e;
    }
    allowed.insert({"low", "high"});
  } else {
    return ctx.err(t->get("dist"), f + ".dist",
                   "unknown distribution '{}' (known: normal, uniform, laplace, exponential, "
                   "lognormal, int)",
                   *dist);
  }
  if (s.dist != Dist::Int && !is_float(dtype))
    return ctx.err(n, f, "{} tensors must use dist = \"int\"", dtype_name(dtype));
  if (const toml::node* m = t->get("min")) {
    if (s.dist == Dist::Int) return ctx.err(m, f + ".min", "int draws have low and high instead");
    auto v = num("min", 0);
    if (!v) return v.unexpected();
    s.min = *v;  // a ReLU's output: values below min become min (half exact zeros for min = mean)
    allowed.insert("min");
  }
  KEVO_TRY(check_unknown_keys(ctx, *t, allowed, f + "."));
  return s;
}

Result<TensorSpec> parse_tensor(const Ctx& ctx, const toml::node& node, std::string_view field,
                                bool is_output) {
  const toml::table* t = node.as_table();
  if (!t) return ctx.err(&node, field, "must be a table");
  std::string f(field);
  TensorSpec s;
  auto name = get_string(ctx, *t, "name", f + ".name");
  if (!name) return name.unexpected();
  if (!is_identifier(*name))
    return ctx.err(t->get("name"), f + ".name", "'{}' is not a name ({})", escaped(*name), kIdentifierRule);
  s.name = *name;
  // "inputs[2]" becomes "inputs(x)": the name is what the author searches for.
  f = fmt::format("{}({})", field.substr(0, field.find('[')), s.name);
  auto dt = get_string(ctx, *t, "dtype", f + ".dtype");
  if (!dt) return dt.unexpected();
  auto d = parse_dtype(*dt);
  if (!d)
    return ctx.err(t->get("dtype"), f + ".dtype",
                   "unknown dtype '{}' (known: f32, f16, bf16, i32, i64, u8)", *dt);
  s.dtype = *d;
  const toml::node* shape = t->get("shape");
  if (!shape || !shape->is_array())
    return ctx.err(shape ? shape : t, f + ".shape", "must be an array like [\"B\", \"N\"]");
  const auto& arr = *shape->as_array();
  if (arr.empty() || arr.size() > 8)
    return ctx.err(shape, f + ".shape", "must have 1 to 8 dimensions (has {})", arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    auto e = get_expr(ctx, &arr[i], fmt::format("{}.shape[{}]", f, i));
    if (!e) return e.unexpected();
    s.shape.push_back(*e);
  }
  std::set<std::string> allowed = {"name", "dtype", "shape"};
  if (is_output) {
    s.role = Role::Output;
  } else {
    auto role = get_string(ctx, *t, "role", f + ".role", std::string("input"));
    if (!role) return role.unexpected();
    if (*role == "input") s.role = Role::Input;
    else if (*role == "weight") s.role = Role::Weight;
    else return ctx.err(t->get("role"), f + ".role", "must be \"input\" or \"weight\", not '{}'", *role);
    auto init = parse_init(ctx, t->get("init"), f + ".init", s.dtype);
    if (!init) return init.unexpected();
    s.init = *init;
    if (const toml::node* w = t->get("wide")) {
      auto b = w->value<bool>();
      if (!b) return ctx.err(w, f + ".wide", "must be true or false");
      s.init.wide = *b;
    }
    allowed.insert({"role", "init", "wide"});
  }
  KEVO_TRY(check_unknown_keys(ctx, *t, allowed, f + "."));
  return s;
}

// A list of names, each naming an element of `known` (the task's inputs or outputs).
Result<std::vector<std::string>> get_names(const Ctx& ctx, const toml::node* n, std::string_view field,
                                           const std::vector<TensorSpec>& known, std::string_view what) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n->is_array()) return ctx.err(n, field, "must be an array of {} names", what);
  for (const auto& e : *n->as_array()) {
    auto s = e.value<std::string>();
    if (!s) return ctx.err(&e, field, "must be an array of {} names", what);
    if (std::none_of(known.begin(), known.end(), [&](const TensorSpec& t) { return t.name == *s; }))
      return ctx.err(&e, field, "'{}' is not one of this task's {}", escaped(*s), what);
    out.push_back(*s);
  }
  return out;
}

Result<GradientSpec> parse_gradient(const Ctx& ctx, const toml::node& n, std::string_view field,
                                    const Task& task) {
  const toml::table* t = n.as_table();
  if (!t) return ctx.err(&n, field, "must be a table like {{ output = \"dx\", of = \"x\", sums_over = \"N\" }}");
  std::string f(field);
  KEVO_TRY(check_unknown_keys(ctx, *t, {"output", "of", "sums_over"}, f + "."));
  GradientSpec g;
  auto out = get_string(ctx, *t, "output", f + ".output");
  if (!out) return out.unexpected();
  if (std::none_of(task.outputs.begin(), task.outputs.end(),
                   [&](const TensorSpec& o) { return o.name == *out; }))
    return ctx.err(t->get("output"), f + ".output", "'{}' is not one of this task's outputs", escaped(*out));
  g.output = *out;
  f = fmt::format("backward.gradients({})", g.output);
  auto of = get_string(ctx, *t, "of", f + ".of");
  if (!of) return of.unexpected();
  if (!is_identifier(*of))
    return ctx.err(t->get("of"), f + ".of", "'{}' is not a name ({})", escaped(*of), kIdentifierRule);
  g.of = *of;
  const toml::node* so = t->get("sums_over");
  if (!so)
    return ctx.err(t, f + ".sums_over",
                   "missing (required): how many terms each element sums, e.g. \"B\" for a weight "
                   "gradient, \"1\" for an elementwise one; it sets the tolerance the gradient needs");
  auto e = get_expr(ctx, so, f + ".sums_over");
  if (!e) return e.unexpected();
  g.sums_over = *e;
  return g;
}

// Every input is saved (an input or an output of the forward) or an incoming gradient, once;
// every output is one gradient.
Status check_backward_roles(const Ctx& ctx, const toml::node* n, Task& task) {
  BackwardSpec& b = *task.backward;
  auto listed = [&](const std::vector<std::pair<std::string, std::string>>& m, const std::string& name) {
    return static_cast<int>(std::count_if(m.begin(), m.end(), [&](const auto& g) { return g.first == name; }));
  };
  for (const auto& in : task.inputs) {
    int saved = static_cast<int>(std::count(b.saved.begin(), b.saved.end(), in.name));
    int total = saved + listed(b.saved_outputs, in.name) + listed(b.grad_outputs, in.name);
    if (total != 1)
      return ctx.err(n, "backward",
                     "input '{}' must be listed exactly once, in saved (a forward input), saved_outputs "
                     "(a forward output) or grad_outputs (an incoming gradient){}",
                     in.name, total ? "" : "; a backward task has no other inputs");
  }
  std::vector<GradientSpec> ordered;
  for (const auto& out : task.outputs) {
    auto same = [&](const GradientSpec& g) { return g.output == out.name; };
    auto count = std::count_if(b.gradients.begin(), b.gradients.end(), same);
    if (count != 1)
      return ctx.err(n, "backward.gradients", "output '{}' must be listed exactly once (is {} times)",
                     out.name, count);
    ordered.push_back(*std::find_if(b.gradients.begin(), b.gradients.end(), same));
  }
  b.gradients = std::move(ordered);
  return {};
}

// backward.grad_outputs / backward.saved_outputs: { input = "forward output", ... }, each key an
// input of this task. grad_outputs is required (a backward has an incoming gradient).
Result<std::vector<std::pair<std::string, std::string>>> parse_output_map(const Ctx& ctx, const toml::table& t,
                                                                        std::string_view key, const Task& task,
                                                                        bool required) {
  const std::string field = "backward." + std::string(key);
  std::vector<std::pair<std::string, std::string>> out;
  const toml::node* n = t.get(key);
  if (!n && !required) return out;
  if (!n || !n->is_table() || (required && n->as_table()->empty()))
    return ctx.err(n ? n : &t, field,
                   "must be a table like {{ {} = \"y\" }}: each input of this task and the forward output it {}",
                   required ? "dy" : "y", required ? "is the gradient of" : "holds (saved by the forward)");
  for (const auto& [k, v] : *n->as_table()) {
    std::string in(k.str()), f = field + "." + in;
    auto o = v.value<std::string>();
    if (!o || !is_identifier(*o)) return ctx.err(&v, f, "must name the forward's output ({})", kIdentifierRule);
    if (std::none_of(task.inputs.begin(), task.inputs.end(), [&](const TensorSpec& s) { return s.name == in; }))
      return ctx.err(&v, f, "'{}' is not one of this task's inputs", escaped(in));
    out.emplace_back(in, *o);
  }
  return out;
}

// [backward]: of, saved, saved_outputs, grad_outputs, gradients; see BackwardSpec.
Status parse_backward(const Ctx& ctx, const toml::table& root, Task& task) {
  const toml::node* n = root.get("backward");
  if (!n) return {};
  const toml::table* t = n->as_table();
  if (!t) return ctx.err(n, "backward", "must be a table: [backward] with of, saved, grad_outputs, gradients");
  KEVO_TRY(check_unknown_keys(ctx, *t, {"of", "saved", "saved_outputs", "grad_outputs", "gradients"}, "backward."));
  BackwardSpec b;
  auto of = get_string(ctx, *t, "of", "backward.of");
  if (!of) return of.unexpected();
  if (!std::regex_match(*of, std::regex("[a-z0-9_]+")) || *of == task.name)
    return ctx.err(t->get("of"), "backward.of", "'{}' must name another task ([a-z0-9_]+)", escaped(*of));
  b.of = *of;
  auto saved = get_names(ctx, t->get("saved"), "backward.saved", task.inputs, "inputs");
  if (!saved) return saved.unexpected();
  b.saved = *saved;
  auto go = parse_output_map(ctx, *t, "grad_outputs", task, true);
  if (!go) return go.unexpected();
  b.grad_outputs = *go;
  auto so = parse_output_map(ctx, *t, "saved_outputs", task, false);
  if (!so) return so.unexpected();
  b.saved_outputs = *so;
  const toml::node* gr = t->get("gradients");
  if (!gr || !gr->is_array() || gr->as_array()->empty())
    return ctx.err(gr ? gr : t, "backward.gradients", "needs one entry per output: {{ output, of, sums_over }}");
  size_t i = 0;
  for (const auto& e : *gr->as_array()) {
    auto g = parse_gradient(ctx, e, fmt::format("backward.gradients[{}]", i++), task);
    if (!g) return g.unexpected();
    b.gradients.push_back(std::move(*g));
  }
  task.backward = std::move(b);
  return check_backward_roles(ctx, n, task);
}

bool has_unaligned_dim(const Config& c) {
  for (const auto& [k, v] : c.dims)
    if (v % 32 != 0) return true;
  return false;
}

// ---- parse_task's phases, in file order ------------------------------------------------------

Status parse_header(const Ctx& ctx, const toml::table& root, Task& task) {
  auto name = get_string(ctx, root, "name", "name");
  if (!name) return name.unexpected();
  if (!std::regex_match(*name, std::regex("[a-z0-9_]+")))
    return ctx.err(root.get("name"), "name", "'{}' must match [a-z0-9_]+", *name);
  task.name = *name;
  auto cat = get_string(ctx, root, "category", "category");
  if (!cat) return cat.unexpected();
  task.category = *cat;
  auto desc = get_string(ctx, root, "description", "description");
  if (!desc) return desc.unexpected();
  if (desc->find_first_not_of(" \n\t") == std::string::npos)
    return ctx.err(root.get("description"), "description", "is empty");
  task.description = *desc;
  return {};
}

Status parse_dims(const Ctx& ctx, const toml::table& root, Task& task) {
  const toml::node* dims = root.get("dims");
  if (!dims || !dims->is_array() || dims->as_array()->empty())
    return ctx.err(dims ? dims : &root, "dims", "must be a non-empty array of dimension names");
  std::set<std::string> dimset;
  for (const auto& d : *dims->as_array()) {
    auto s = d.value<std::string>();
    if (!s || !is_identifier(*s))
      return ctx.err(&d, "dims", "each dimension must be a name like \"N\" ({})", kIdentifierRule);
    if (!dimset.insert(*s).second) return ctx.err(&d, "dims", "'{}' is declared twice", *s);
    task.dims.push_back(*s);
  }
  return {};
}

// flops, bytes, workspace, libraries, inplace, oracle and the PyTorch files.
Status parse_settings(const Ctx& ctx, const toml::table& root, Task& task) {
  for (const char* k : {"flops", "bytes"}) {
    const toml::node* n = root.get(k);
    if (!n) return ctx.err(&root, k, "missing (required): an expression of the dims");
    auto e = get_expr(ctx, n, k);
    if (!e) return e.unexpected();
    (std::string_view(k) == "flops" ? task.flops_expr : task.bytes_expr) = *e;
  }
  if (const toml::node* n = root.get("workspace")) {
    auto e = get_expr(ctx, n, "workspace");
    if (!e) return e.unexpected();
    task.workspace_expr = *e;
  }
  if (const toml::node* n = root.get("libraries")) {
    if (!n->is_array()) return ctx.err(n, "libraries", "must be an array like [\"cublas\"]");
    for (const auto& l : *n->as_array()) {
      auto s = l.value<std::string>();
      if (s && *s == "cublas") task.allow_cublas = true;
      else if (s && *s == "cudnn") task.allow_cudnn = true;
      else return ctx.err(&l, "libraries", "unknown library (known: cublas, cudnn)");
    }
  }
  auto inplace = get_bool(ctx, root, "inplace", "inplace", false);
  if (!inplace) return inplace.unexpected();
  task.inplace = *inplace;
  auto oracle = get_string(ctx, root, "oracle", "oracle", std::string("baseline"));
  if (!oracle) return oracle.unexpected();
  if (*oracle != "baseline" && *oracle != "reference" && *oracle != "torch")
    return ctx.err(root.get("oracle"), "oracle",
                   "must be \"baseline\", \"reference\" or \"torch\", not '{}'", *oracle);
  task.oracle_is_reference = *oracle == "reference";
  task.oracle_is_torch = *oracle == "torch";
  for (const char* k : {"torch_reference", "torch_baseline"}) {
    auto v = get_string(ctx, root, k, k, std::string());
    if (!v) return v.unexpected();
    (std::string_view(k) == "torch_reference" ? task.torch_reference : task.torch_baseline) = *v;
  }
  if (task.oracle_is_torch && task.torch_reference.empty())
    return ctx.err(&root, "torch_reference",
                   "oracle = \"torch\" needs torch_reference = \"reference.py\" (the PyTorch module)");
  return {};
}

Status parse_tensors(const Ctx& ctx, const toml::table& root, Task& task) {
  const std::set<std::string> dimset(task.dims.begin(), task.dims.end());
  std::set<std::string> tensor_names;
  for (const char* key : {"inputs", "outputs"}) {
    bool out = std::string_view(key) == "outputs";
    const toml::node* n = root.get(key);
    if (!n || !n->is_array_of_tables() || n->as_array()->empty())
      return ctx.err(n ? n : &root, key, "needs at least one [[{}]] table", key);
    size_t i = 0;
    for (const auto& t : *n->as_array()) {
      auto s = parse_tensor(ctx, t, fmt::format("{}[{}]", key, i++), out);
      if (!s) return s.unexpected();
      if (!tensor_names.insert(s->name).second)
        return ctx.err(&t, key, "tensor name '{}' is used twice", s->name);
      for (size_t j = 0; j < s->shape.size(); ++j) {
        auto names = expr_names(s->shape[j]);
        if (!names) return names.unexpected();
        for (const auto& nm : names.value())
          if (!dimset.count(nm))
            return ctx.err(&t, fmt::format("{}({}).shape[{}]", key, s->name, j),
                           "'{}' is not declared in dims", nm);
      }
      (out ? task.outputs : task.inputs).push_back(std::move(*s));
    }
  }
  return {};
}

Status parse_scalars(const Ctx& ctx, const toml::table& root, Task& task) {
  const toml::node* n = root.get("scalars");
  if (!n) return {};
  if (!n->is_array_of_tables()) return ctx.err(n, "scalars", "must be [[scalars]] tables");
  size_t i = 0;
  for (const auto& t : *n->as_array()) {
    std::string f = fmt::format("scalars[{}]", i++);
    auto nm = get_string(ctx, *t.as_table(), "name", f + ".name");
    if (!nm) return nm.unexpected();
    if (!is_identifier(*nm))
      return ctx.err(t.as_table()->get("name"), f + ".name", "'{}' is not a name ({})", escaped(*nm),
                     kIdentifierRule);
    auto v = get_number(ctx, *t.as_table(), "value", f + ".value");
    if (!v) return v.unexpected();
    KEVO_TRY(check_unknown_keys(ctx, *t.as_table(), {"name", "value"}, f + "."));
    task.scalars.push_back({*nm, *v});
  }
  return {};
}

Result<Config> parse_config(const Ctx& ctx, const toml::node& cn, size_t ci, const Task& task) {
  const toml::table& ct = *cn.as_table();
  std::string f = fmt::format("configs[{}]", ci);
  Config c;
  auto nm = get_string(ctx, ct, "name", f + ".name");
  if (!nm) return nm.unexpected();
  c.name = *nm;
  f = fmt::format("configs({})", c.name);
  KEVO_TRY(check_unknown_keys(ctx, ct, {"name", "dims", "main", "held_out"}, f + "."));
  const toml::node* d = ct.get("dims");
  if (!d || !d->is_table()) return ctx.err(d ? d : &cn, f + ".dims", "must be a table like {{ N = 1024 }}");
  for (const auto& [k, v] : *d->as_table()) {
    std::string key(k.str());
    if (std::find(task.dims.begin(), task.dims.end(), key) == task.dims.end())
      return ctx.err(&v, f + ".dims." + key, "not declared in dims");
    auto iv = v.value<int64_t>();
    if (!v.is_integer() || !iv || *iv <= 0)
      return ctx.err(&v, f + ".dims." + key, "must be a positive integer");
    c.dims[key] = *iv;
  }
  for (const auto& dn : task.dims)
    if (!c.dims.count(dn)) return ctx.err(d, f + ".dims", "does not set dimension '{}'", dn);
  auto ho = get_bool(ctx, ct, "held_out", f + ".held_out", false);
  if (!ho) return ho.unexpected();
  c.held_out = *ho;
  return c;
}

Status parse_configs(const Ctx& ctx, const toml::table& root, Task& task) {
  const toml::node* cfgs = root.get("configs");
  if (!cfgs || !cfgs->is_array_of_tables())
    return ctx.err(cfgs ? cfgs : &root, "configs", "needs [[configs]] tables");
  std::set<std::string> cfg_names;
  int mains = 0, visible = 0, held = 0;
  bool unaligned = false;
  size_t ci = 0;
  for (const auto& cn : *cfgs->as_array()) {
    auto c = parse_config(ctx, cn, ci, task);
    if (!c) return c.unexpected();
    const std::string f = fmt::format("configs({})", c->name);
    if (!cfg_names.insert(c->name).second) return ctx.err(&cn, f, "config name used twice");
    auto mn = get_bool(ctx, *cn.as_table(), "main", f + ".main", false);
    if (!mn) return mn.unexpected();
    if (*mn) {
      if (c->held_out) return ctx.err(&cn, f, "the main config cannot be held_out");
      ++mains;
      task.main_config = ci;
    }
    (c->held_out ? held : visible)++;
    unaligned |= has_unaligned_dim(*c);
    task.configs.push_back(std::move(*c));
    ++ci;
  }
  if (mains > 1) return ctx.err(cfgs, "configs", "more than one config has main = true");
  if (mains == 0) {
    for (size_t i = 0; i < task.configs.size(); ++i)
      if (!task.configs[i].held_out) {
        task.main_config = i;
        break;
      }
  }
  if (visible < 3)
    return ctx.err(cfgs, "configs", "needs at least 3 configs that are not held_out (has {})", visible);
  if (held < 1) return ctx.err(cfgs, "configs", "needs at least one config with held_out = true");
  if (!unaligned)
    return ctx.err(cfgs, "configs", "needs a config with a size that is not a multiple of 32");
  return {};
}

Status parse_tolerance(const Ctx& ctx, const toml::table& root, Task& task) {
  const toml::node* n = root.get("tolerance");
  if (!n) return {};
  if (!n->is_table()) return ctx.err(n, "tolerance", "must be a table like f32 = {{ atol = 1e-4, rtol = 1e-4 }}");
  for (const auto& [k, v] : *n->as_table()) {
    std::string key(k.str());
    auto dt = parse_dtype(key);
    if (!dt) return ctx.err(&v, "tolerance." + key, "unknown dtype");
    if (!v.is_table()) return ctx.err(&v, "tolerance." + key, "must be {{ atol = ..., rtol = ... }}");
    Tolerance tol = task.tolerance_for(*dt);
    auto a = get_number(ctx, *v.as_table(), "atol", "tolerance." + key + ".atol", tol.atol);
    if (!a) return a.unexpected();
    auto r = get_number(ctx, *v.as_table(), "rtol", "tolerance." + key + ".rtol", tol.rtol);
    if (!r) return r.unexpected();
    if (*a < 0 || *r < 0) return ctx.err(&v, "tolerance." + key, "must not be negative");
    task.tolerance[*dt] = {*a, *r};
  }
  return {};
}

// Every config must resolve (every expression evaluates, every size fits 64 bits) and fit the size
// limits (task/limits.h), so errors surface at load, not mid-run.
Status check_configs(const Task& task, const fs::path& file) {
  for (const auto& c : task.configs) {
    auto r = task.resolve(c);
    if (!r) return fail(r.error().code, "{}: {}", file.string(), r.error().message);
    for (const auto* list : {&task.inputs, &task.outputs})
      for (const auto& t : *list) {
        if (t.init.dist != Dist::Int) continue;
        auto lo = eval_int_expr(t.init.low_expr, c.dims);
        auto hi = eval_int_expr(t.init.high_expr, c.dims);
        if (!lo || !hi)
          return fail(ErrorCode::kParse, "{}: inputs({}).init: {}", file.string(), t.name, (!lo ? lo.error() : hi.error()).message);
        if (*hi <= *lo)
          return fail(ErrorCode::kParse, "{}: inputs({}).init: config '{}': high ({}) must exceed low ({})", file.string(), t.name,
                      c.name, *hi, *lo);
      }
    if (auto l = check_config_limits(task, *r); !l) return fail(ErrorCode::kParse, "{}: {}", file.string(), l.error().message);
    for (const auto& [k, v] : {std::pair{"flops", r->flops}, std::pair{"bytes", r->bytes}})
      if (!(v.value_or(0) > 0))
        return fail(ErrorCode::kParse, "{}: {}: is {} for config '{}' (must be positive)", file.string(), k, v.value_or(0), c.name);
    if (task.backward)
      for (const auto& g : task.backward->gradients) {
        auto v = eval_expr(g.sums_over, c.dims);
        if (!v || !(*v >= 1))
          return fail(ErrorCode::kParse, "{}: backward.gradients({}).sums_over: {}", file.string(),
                      g.output,
                      v ? fmt::format("is {} for config '{}' (must be at least 1)", *v, c.name)
                        : v.error().message);
      }
    if (r->workspace_bytes > kMaxConfigBytes)
      return fail(ErrorCode::kParse, "{}: workspace: {} bytes for config '{}' is over the limit of {} bytes", file.string(),
                  r->workspace_bytes, c.name, kMaxConfigBytes);
  }
  return {};
}

}  // namespace

Result<Task> parse_task(std::string_view text, const fs::path& file) {
  Ctx ctx(file);
  toml::table root;
  if (auto bad = find_toml_hazard(text))
    return fail(ErrorCode::kParse, "{}:{}:{}: TOML syntax error: {}", file.string(), bad->line,
                bad->column, describe(bad->kind));
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return fail(ErrorCode::kParse, "{}:{}:{}: TOML syntax error: {}", file.string(),
                e.source().begin.line, e.source().begin.column, e.description());
  }
  KEVO_TRY(check_unknown_keys(ctx, root, kKnownTop, ""));
  Task task;
  task.dir = file.parent_path();
  KEVO_TRY(parse_header(ctx, root, task));
  KEVO_TRY(parse_dims(ctx, root, task));
  KEVO_TRY(parse_settings(ctx, root, task));
  KEVO_TRY(parse_tensors(ctx, root, task));
  KEVO_TRY(parse_scalars(ctx, root, task));
  KEVO_TRY(parse_configs(ctx, root, task));
  KEVO_TRY(parse_tolerance(ctx, root, task));
  KEVO_TRY(parse_backward(ctx, root, task));
  KEVO_TRY(check_configs(task, file));
  return task;
}

Result<Task> load_task(const fs::path& dir) {
  std::error_code ec;
  fs::path d = dir;
  if (fs::is_regular_file(d, ec) && d.filename() == "task.toml") d = d.parent_path();
  if (!fs::is_directory(d, ec))
    return fail(ErrorCode::kNotFound, "{}: not a task directory", dir.string());
  auto text = read_file(d / "task.toml");
  if (!text) return text.unexpected();
  auto task = parse_task(*text, d / "task.toml");
  if (!task) return task;
  task->dir = d;
  // A PyTorch-oracle task needs its module, and may lack a CUDA baseline until `kevo translate`;
  // every other task needs both the baseline and the CPU reference.
  if (task->oracle_is_torch) {
    if (!fs::exists(task->torch_reference_path(), ec))
      return fail(ErrorCode::kNotFound, "{}: missing (named by torch_reference in task.toml)",
                  task->torch_reference_path().string());
  } else {
    for (const char* f : {"baseline.cu", "reference.cpp"})
      if (!fs::exists(d / f, ec))
        return fail(ErrorCode::kNotFound, "{}: missing (every task needs one)", (d / f).string());
  }
  if (!task->torch_baseline.empty() && !fs::exists(d / task->torch_baseline, ec))
    return fail(ErrorCode::kNotFound, "{}: missing (named by torch_baseline in task.toml)",
                (d / task->torch_baseline).string());
  return task;
}

}  // namespace kevo
