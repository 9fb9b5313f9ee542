#include "compile/nvcc_pipeline.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace kevo {

namespace {

enum class Tool { HostCxx, Cudafe, Cicc, Ptxas, Fatbinary, Nvlink, Rm };

struct Command {
  std::string line;
  Tool tool;
  int fail_exit = 0;  // the script's exit status when this step fails; 0: the step's own
};

// The program of a command line: its first word, unquoted, without its directory.
std::string program_of(std::string_view line) {
  std::string w;
  size_t i = 0;
  if (!line.empty() && line[0] == '"') {
    size_t e = line.find('"', 1);
    w = std::string(line.substr(1, e == std::string_view::npos ? std::string_view::npos : e - 1));
  } else {
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    w = std::string(line.substr(0, i));
  }
  if (auto s = w.rfind('/'); s != std::string::npos) w = w.substr(s + 1);
  return w;
}

Tool tool_of(const std::string& prog) {
  if (prog == "cudafe++") return Tool::Cudafe;
  if (prog == "cicc") return Tool::Cicc;
  if (prog == "ptxas") return Tool::Ptxas;
  if (prog == "fatbinary") return Tool::Fatbinary;
  if (prog == "nvlink") return Tool::Nvlink;
  if (prog == "rm") return Tool::Rm;
  return Tool::HostCxx;  // gcc, g++, or whatever -ccbin names
}

bool is_assignment(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
    ++i;
  return i > 0 && i < line.size() && line[i] == '=' &&
         !std::isdigit(static_cast<unsigned char>(line[0]));
}

// The quoted path after `flag` ("--module_id_file_name "X""), or empty.
std::string quoted_after(std::string_view line, std::string_view flag) {
  size_t p = line.find(flag);
  if (p == std::string_view::npos) return "";
  p += flag.size();
  while (p < line.size() && line[p] == ' ') ++p;
  if (p >= line.size() || line[p] != '"') return "";
  size_t e = line.find('"', p + 1);
  if (e == std::string_view::npos) return "";
  return std::string(line.substr(p + 1, e - p - 1));
}

// Where `w` stands as a whole, space-separated word in `line`; npos if it does not.
size_t find_word(std::string_view line, std::string_view w) {
  for (size_t p = line.find(w); p != std::string_view::npos; p = line.find(w, p + 1)) {
    bool start = p == 0 || line[p - 1] == ' ';
    bool end = p + w.size() == line.size() || line[p + w.size()] == ' ';
    if (start && end) return p;
  }
  return std::string_view::npos;
}

bool has_word(std::string_view line, std::string_view w) { return find_word(line, w) != std::string_view::npos; }

// Removes the first ` <word>` (a whole word after a space) from `line`; false if absent.
bool erase_word(std::string& line, std::string_view w) {
  const size_t p = find_word(line, w);
  if (p == std::string::npos || p == 0) return false;
  line.erase(p - 1, w.size() + 1);
  return true;
}

// The steps after the front ends: the host compile, nvcc's device link (nvlink, fatbinary -link,
// rm, the link stub's compile) and the final link. Without relocatable device code (no cicc
// --device-c) the device link registers nothing: it is dropped, with its object and libcudadevrt
// from the final link. A list of another shape is kept as nvcc gave it.
std::vector<Command> link_steps(std::vector<Command> tail, bool relocatable, const NvccScriptOptions& o) {
  const size_t n = tail.size();
  if (n < 2 || tail[n - 1].tool != Tool::HostCxx || !has_word(tail[n - 1].line, "-shared")) return tail;
  size_t nl = 0;
  while (nl < n && tail[nl].tool != Tool::Nvlink) ++nl;
  bool dlink_shape = !relocatable && nl + 2 < n && tail[n - 2].tool == Tool::HostCxx &&
                     tail[n - 2].line.find("link.stub") != std::string::npos;
  for (size_t i = nl + 1; dlink_shape && i + 2 < n; ++i)
    dlink_shape = tail[i].tool == Tool::Fatbinary || tail[i].tool == Tool::Rm;
  if (dlink_shape) {
    const std::string& sl = tail[n - 2].line;
    const size_t at = sl.rfind(" -o \"");
    const std::string stub_obj = at == std::string::npos ? "" : quoted_after(sl.substr(at), " -o");
    Command link = tail[n - 1];
    if (!stub_obj.empty() && erase_word(link.line, "\"" + stub_obj + "\"")) {
      erase_word(link.line, "-lcudadevrt");
      tail.resize(nl);
      tail.push_back(link);
    }
  }
  if (!o.fuse_ld.empty()) {
    std::string& l = tail.back().line;
    size_t sp = l.find(' ');
    if (sp != std::string::npos) l.insert(sp, " -fuse-ld=" + o.fuse_ld);
    tail.back().fail_exit = kLinkerFailedExit;
  }
  return tail;
}

}  // namespace

std::string nvcc_module_id(std::string_view file_name, uint64_t salt) {
  std::string name(file_name);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return fmt::format("_{:08x}_{}_{}_{:08x}", static_cast<uint32_t>(salt >> 32), name.size(), name,
                     static_cast<uint32_t>(salt));
}

Result<NvccScript> parallel_nvcc_script(std::string_view dryrun, const NvccScriptOptions& o) {
  NvccScript out;
  std::vector<std::string> env;
  std::vector<Command> cmds;
  size_t pos = 0;
  while (pos <= dryrun.size()) {
    size_t nl = dryrun.find('\n', pos);
    std::string_view line =
        dryrun.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? dryrun.size() + 1 : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("#$ ", 0) != 0) {
      if (!line.empty()) out.driver_output.append(line).append("\n");
      continue;
    }
    line.remove_prefix(3);
    if (is_assignment(line)) {
      // Only plain values are needed (PATH, CICC_PATH, ...); the others (INCLUDES="-I..." "...")
      // are nvcc's bookkeeping, already expanded into the commands, and are not valid sh.
      std::string_view value = line.substr(line.find('=') + 1);
      bool plain =
          !value.empty() && value.find_first_of(" \t\"'`\\;&|<>()") == std::string_view::npos;
      if (plain) env.push_back(fmt::format("{}\nexport {}", line, line.substr(0, line.find('='))));
      continue;
    }
    while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
    cmds.push_back({std::string(line), tool_of(program_of(line))});
  }
  if (cmds.empty()) return fail("nvcc --dryrun listed no commands");

  auto find_one = [&](Tool t, const char* name) -> Result<size_t> {
    size_t found = cmds.size(), n = 0;
    for (size_t i = 0; i < cmds.size(); ++i)
      if (cmds[i].tool == t) found = i, ++n;
    if (n != 1) return fail("nvcc --dryrun listed {} {} commands, expected 1", n, name);
    return found;
  };
  auto rfe = find_one(Tool::Cudafe, "cudafe++");
  if (!rfe) return rfe.unexpected();
  auto rcc = find_one(Tool::Cicc, "cicc");
  if (!rcc) return rcc.unexpected();
  auto rpx = find_one(Tool::Ptxas, "ptxas");
  if (!rpx) return rpx.unexpected();
  const size_t fe = *rfe, cc = *rcc, px = *rpx;
  // The shape: ... host-cpp, cudafe++, device-cpp, cicc, ptxas, fatbinary, ... (nvcc 12-13).
  if (fe == 0 || cc != fe + 2 || px != fe + 3 || fe + 4 >= cmds.size())
    return fail("nvcc --dryrun: the front-end commands are not in the expected order");
  const Command& host_pp = cmds[fe - 1];
  const Command& dev_pp = cmds[fe + 1];
  if (host_pp.tool != Tool::HostCxx || !has_word(host_pp.line, "-E") ||
      host_pp.line.find("-D__CUDA_ARCH__=") != std::string::npos)
    return fail("nvcc --dryrun: no host preprocessing step before cudafe++");
  if (dev_pp.tool != Tool::HostCxx || !has_word(dev_pp.line, "-E") ||
      dev_pp.line.find("-D__CUDA_ARCH__=") == std::string::npos)
    return fail("nvcc --dryrun: no device preprocessing step after cudafe++");
  if (cmds[fe + 4].tool != Tool::Fatbinary)
    return fail("nvcc --dryrun: no fatbinary step after ptxas");

  std::string fe_line = cmds[fe].line;
  const std::string id_path = quoted_after(fe_line, "--module_id_file_name");
  if (id_path.empty() || quoted_after(cmds[cc].line, "--module_id_file_name") != id_path)
    return fail("nvcc --dryrun: cudafe++ and cicc do not share a module id file");
  // cudafe++ would generate the id that cicc reads; the script's caller writes it instead, so that
  // cicc need not wait for cudafe++.
  const std::string gen = " --gen_module_id_file";
  size_t g = fe_line.find(gen + " ");
  if (g == std::string::npos)
    return fail("nvcc --dryrun: cudafe++ does not generate the module id");
  fe_line.erase(g, gen.size());
  out.module_id_path = id_path;

  std::string& s = out.script;
  s = "# nvcc's own steps (nvcc --dryrun), the host and device front ends in parallel (kevo)\n";
  for (const auto& e : env) s += e + "\n";
  auto serial = [&](const Command& c) {
    // nvcc ignores a failed rm of an intermediate; so does this.
    if (c.tool == Tool::Rm)
      s += c.line + " 2>/dev/null\n";
    else if (c.fail_exit)
      s += fmt::format("{} || exit {}\n", c.line, c.fail_exit);
    else
      s += c.line + " || exit $?\n";
  };
  for (size_t i = 0; i + 1 < fe; ++i) serial(cmds[i]);
  s += fmt::format("( {} && {} ) > \"$TMPDIR/kevo_nvcc_host.log\" 2>&1 &\nhp=$!\n", host_pp.line,
                   fe_line);
  s += fmt::format("( {} && {} && {} && {} ) > \"$TMPDIR/kevo_nvcc_device.log\" 2>&1 &\ndp=$!\n",
                   dev_pp.line, cmds[cc].line, cmds[px].line, cmds[fe + 4].line);
  // Output in nvcc's order, and nvcc stops at the first failing step: the host front end's
  // errors alone when it fails (the device front end would repeat them).
  s += "wait $hp; hrc=$?\nwait $dp; drc=$?\n";
  s += "cat \"$TMPDIR/kevo_nvcc_host.log\" >&2\n[ $hrc -eq 0 ] || exit $hrc\n";
  s += "cat \"$TMPDIR/kevo_nvcc_device.log\" >&2\n[ $drc -eq 0 ] || exit $drc\n";
  const bool relocatable = has_word(cmds[cc].line, "--device-c");
  for (const auto& c : link_steps({cmds.begin() + static_cast<long>(fe) + 5, cmds.end()}, relocatable, o)) serial(c);
  return out;
}

}  // namespace kevo
