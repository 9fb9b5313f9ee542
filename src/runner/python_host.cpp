#include "runner/python_host.h"

#include <dlfcn.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

namespace kevo::runner {
namespace {

// The few C API functions the host needs, looked up in the libpython the checker named: their
// signatures are CPython's stable ABI, the same in every Python 3.
using PyObj = void;
struct Api {
  void (*Py_InitializeEx)(int);
  void* (*PyEval_SaveThread)();
  int (*PyGILState_Ensure)();
  void (*PyGILState_Release)(int);
  int (*PyRun_SimpleString)(const char*);
  PyObj* (*PyImport_ImportModule)(const char*);
  PyObj* (*PyObject_GetAttrString)(PyObj*, const char*);
  PyObj* (*PyObject_CallFunction)(PyObj*, const char*, ...);
  PyObj* (*PyObject_Str)(PyObj*);
  long (*PyLong_AsLong)(PyObj*);
  const char* (*PyUnicode_AsUTF8)(PyObj*);
  void (*Py_DecRef)(PyObj*);
  PyObj* (*PyErr_Occurred)();
  void (*PyErr_Fetch)(PyObj**, PyObj**, PyObj**);
};
Api g_api;
PythonHost* g_host = nullptr;

template <class F>
bool bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

Status open_api(const std::string& path) {
  // Global: torch's extension modules find the interpreter's symbols in the global scope, as they
  // would in a python executable.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib) return fail("cannot open libpython '{}': {}", path, dlerror());
  Api& a = g_api;
  const bool ok = bind(lib, a.Py_InitializeEx, "Py_InitializeEx") &&
                  bind(lib, a.PyEval_SaveThread, "PyEval_SaveThread") &&
                  bind(lib, a.PyGILState_Ensure, "PyGILState_Ensure") &&
                  bind(lib, a.PyGILState_Release, "PyGILState_Release") &&
                  bind(lib, a.PyRun_SimpleString, "PyRun_SimpleString") &&
                  bind(lib, a.PyImport_ImportModule, "PyImport_ImportModule") &&
                  bind(lib, a.PyObject_GetAttrString, "PyObject_GetAttrString") &&
                  bind(lib, a.PyObject_CallFunction, "PyObject_CallFunction") &&
                  bind(lib, a.PyObject_Str, "PyObject_Str") && bind(lib, a.PyLong_AsLong, "PyLong_AsLong") &&
                  bind(lib, a.PyUnicode_AsUTF8, "PyUnicode_AsUTF8") && bind(lib, a.Py_DecRef, "Py_DecRef") &&
                  bind(lib, a.PyErr_Occurred, "PyErr_Occurred") && bind(lib, a.PyErr_Fetch, "PyErr_Fetch");
  if (!ok) return fail("'{}' lacks a CPython 3 C API function: {}", path, dlerror());
  return {};
}

// The pending exception as text ("" if none), cleared.
std::string take_error() {
  if (!g_api.PyErr_Occurred()) return "";
  PyObj *type = nullptr, *value = nullptr, *tb = nullptr;
  g_api.PyErr_Fetch(&type, &value, &tb);
  std::string out = "Python error";
  if (PyObj* s = value ? g_api.PyObject_Str(value) : nullptr) {
    if (const char* c = g_api.PyUnicode_AsUTF8(s)) out = c;
    g_api.Py_DecRef(s);
  }
  for (PyObj* o : {type, value, tb})
    if (o) g_api.Py_DecRef(o);
  return out;
}

// The text a Python call returned (a str), or its exception.
Result<std::string> text_of(PyObj* r) {
  if (!r) return fail("{}", take_error());
  const char* c = g_api.PyUnicode_AsUTF8(r);
  std::string out = c ? c : "";
  g_api.Py_DecRef(r);
  if (!c) return fail("{}", take_error());
  return out;
}

struct Gil {
  int state = g_api.PyGILState_Ensure();
  ~Gil() { g_api.PyGILState_Release(state); }
};

Result<std::string> prepare(const PythonStart& s, void*& call_fn) {
  nlohmann::json path = s.sys_path;
  setenv("KEVO_PY_SYSPATH", path.dump().c_str(), 1);
  if (g_api.PyRun_SimpleString("import sys, os, json\nsys.path[:] = json.loads(os.environ.pop('KEVO_PY_SYSPATH'))\n"))
    return fail("cannot set the interpreter's sys.path");
  PyObj* mod = g_api.PyImport_ImportModule("kevo_bridge.candidate_runtime");
  if (!mod) return fail("cannot import kevo_bridge.candidate_runtime: {}", take_error());
  PyObj* prep = g_api.PyObject_GetAttrString(mod, "prepare");
  call_fn = g_api.PyObject_GetAttrString(mod, "call");
  g_api.Py_DecRef(mod);
  if (!prep || !call_fn) return fail("kevo_bridge.candidate_runtime lacks prepare/call: {}", take_error());
  auto torch = text_of(g_api.PyObject_CallFunction(prep, "ss", s.meta_json.c_str(), s.device.c_str()));
  g_api.Py_DecRef(prep);
  if (!torch) return fail("the Python runtime's prepare failed: {}", torch.error().message);
  return "torch " + *torch;
}

// The module candidate_runtime, for the functions called after start.
PyObj* runtime_attr(const char* name) {
  PyObj* mod = g_api.PyImport_ImportModule("kevo_bridge.candidate_runtime");
  if (!mod) return nullptr;
  PyObj* f = g_api.PyObject_GetAttrString(mod, name);
  g_api.Py_DecRef(mod);
  return f;
}

}  // namespace

Result<PythonHost*> PythonHost::start(const PythonStart& s) {
  if (g_host) return fail("the Python runtime is started once per process");
  KEVO_TRY(open_api(s.libpython));
  g_api.Py_InitializeEx(0);  // 0: no signal handlers of Python's (the runner's stay)
  auto* h = new PythonHost();
  auto v = prepare(s, h->call_fn_);
  g_api.PyEval_SaveThread();  // calls take the GIL themselves
  if (!v) {
    delete h;
    return v.unexpected();
  }
  h->versions_ = *v;
  g_host = h;
  return h;
}

PythonHost* PythonHost::get() { return g_host; }

Status PythonHost::load(int fd, const std::string& filename, const std::string& entry) {
  Gil gil;
  PyObj* f = runtime_attr("load");
  if (!f) return fail("the Python runtime has no load: {}", take_error());
  auto r = text_of(g_api.PyObject_CallFunction(f, "iss", fd, filename.c_str(), entry.c_str()));
  g_api.Py_DecRef(f);
  if (!r) return fail("{}", r.error().message);
  if (!r->empty()) return fail("{}", *r);
  return {};
}

int PythonHost::call(const kevo_args* a) {
  Gil gil;
  PyObj* r = g_api.PyObject_CallFunction(call_fn_, "K", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(a)));
  if (!r) {
    (void)take_error();
    return 125;  // the runtime itself raised (python_codes.h: kInternal)
  }
  const long rc = g_api.PyLong_AsLong(r);
  g_api.Py_DecRef(r);
  return static_cast<int>(rc);
}

std::string PythonHost::last_error() {
  Gil gil;
  PyObj* f = runtime_attr("last_error");
  if (!f) return take_error();
  auto r = text_of(g_api.PyObject_CallFunction(f, nullptr));
  g_api.Py_DecRef(f);
  return r ? *r : r.error().message;
}

int PythonHost::forward(const kevo_args* a) { return g_host ? g_host->call(a) : 123; }

}  // namespace kevo::runner
