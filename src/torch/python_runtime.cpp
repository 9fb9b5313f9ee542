#include "torch/python_runtime.h"

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "torch/bridge.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace kevo::torch {
namespace {

constexpr const char* kAsk = R"(import json, os, sys, sysconfig
lib = None
for name in (sysconfig.get_config_var('INSTSONAME'), sysconfig.get_config_var('LDLIBRARY')):
    for d in (sysconfig.get_config_var('LIBDIR'), sysconfig.get_config_var('LIBPL')):
        if name and d and os.path.isfile(os.path.join(d, name)) and name.endswith(tuple(['.so'] + ['.so.%d.%d' % sys.version_info[:2], '.so.1.0', '.so.1'])):
            lib = lib or os.path.join(d, name)
print(json.dumps({'lib': lib, 'path': [p for p in sys.path if p and os.path.isdir(p)]}))
)";

bool under_system(const std::string& p) {
  for (const char* root : {"/usr/", "/lib/", "/lib64/", "/bin/"})
    if (p.rfind(root, 0) == 0) return true;
  return false;
}

Result<PythonRuntime> ask(const std::string& python) {
  auto r = run_process({.argv = {python, "-I", "-c", kAsk}, .timeout = std::chrono::milliseconds(60000)});
  if (!r) return r.unexpected();
  if (!r->ok()) return fail("{}: cannot tell its libpython and sys.path: {}", python, r->err);
  nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
  if (!j.is_object() || !j["path"].is_array()) return fail("{}: unreadable answer '{}'", python, r->out);
  if (!j["lib"].is_string())
    return fail("{} has no shared libpython (a statically linked interpreter): kevo's runner cannot embed it for "
                "Python candidates (install the libpython3.X package, or point KEVO_PYTHON at another Python)",
                python);
  PythonRuntime rt{python, j["lib"].get<std::string>(), {(kevo_home() / "python").string()}, {}};
  for (const auto& p : j["path"]) {
    const std::string s = std::filesystem::weakly_canonical(p.get<std::string>()).string();
    rt.sys_path.push_back(s);
    if (!under_system(s + "/")) rt.read_dirs.push_back(s);
  }
  return rt;
}

}  // namespace

Result<PythonRuntime> python_runtime() {
  static std::optional<Result<PythonRuntime>> cached;
  if (cached) return *cached;
  auto py = find_torch_python();
  if (!py) return py.unexpected();
  cached = ask(*py);
  return *cached;
}

}  // namespace kevo::torch
