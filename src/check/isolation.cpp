#include "check/isolation.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace kevo {

std::string Isolation::describe() const {
  std::string s = identity_dropped ? fmt::format("uid {} (gave up root)", uid)
                  : uid == 0       ? std::string("root (kept)")
                                   : fmt::format("uid {}{}", uid, same_user ? " (the checker's)" : "");
  s += undumpable ? ", undumpable" : ", dumpable";
  s += landlock_abi > 0 ? fmt::format(", Landlock ABI {}{}", landlock_abi, landlock_scoped ? " (scoped)" : "")
                        : ", no Landlock";
  s += seccomp ? ", seccomp" : ", no seccomp";
  if (proc_private) s += ", private /proc";
  if (outside_checked) s += "; ids and seccomp confirmed from outside";
  if (!error.empty()) s += "; " + error;
  return s;
}

nlohmann::json Isolation::to_json() const {
  nlohmann::json j{{"uid", uid},
                   {"identity_dropped", identity_dropped},
                   {"same_user", same_user},
                   {"landlock_abi", landlock_abi},
                   {"landlock_scoped", landlock_scoped},
                   {"seccomp", seccomp},
                   {"undumpable", undumpable},
                   {"outside_checked", outside_checked},
                   {"proc_private", proc_private},
                   {"weak", weak()}};
  if (!error.empty()) j["error"] = error;
  return j;
}

Isolation Isolation::from_json(const nlohmann::json& j) {
  Isolation i;
  if (!j.is_object()) return i;
  i.uid = j.value("uid", -1);
  i.identity_dropped = j.value("identity_dropped", false);
  i.same_user = j.value("same_user", false);
  i.landlock_abi = j.value("landlock_abi", 0);
  i.landlock_scoped = j.value("landlock_scoped", false);
  i.seccomp = j.value("seccomp", false);
  i.undumpable = j.value("undumpable", false);
  i.outside_checked = j.value("outside_checked", false);
  i.proc_private = j.value("proc_private", false);
  i.error = j.value("error", std::string());
  return i;
}

Result<ProcConfinement> read_proc_confinement(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return fail(ErrorCode::kNotFound, "no /proc entry for process {}", pid);
  ProcConfinement c;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string key;
    f >> key;
    if (key == "Uid:") f >> c.uid[0] >> c.uid[1] >> c.uid[2] >> c.uid[3];
    else if (key == "NoNewPrivs:") f >> c.no_new_privs;
    else if (key == "Seccomp:") f >> c.seccomp;
    else if (key == "Threads:") f >> c.threads;
  }
  if (c.uid[0] < 0) return fail(ErrorCode::kParse, "/proc/{}/status has no Uid line", pid);
  return c;
}

int proc_threads(int pid) {
  auto c = pid > 0 ? read_proc_confinement(pid) : Result<ProcConfinement>(fail("no pid"));
  return c ? c->threads : -1;
}

int proc_hidden(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/mountinfo");
  if (!in) return -1;
  int hidden = 0;  // the last procfs on /proc is the one its paths reach
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    const size_t dash = line.find(" - proc ");
    if (point == "/proc" && dash != std::string::npos) hidden = line.find("hidepid=invisible", dash) != std::string::npos;
  }
  return hidden;
}

Result<Isolation> confirm_isolation(const proto::Isolation& r, int pid) {
  Isolation i{r.uid, r.identity_dropped, r.uid == static_cast<int>(geteuid()), r.landlock_abi, r.landlock_scoped,
              r.seccomp, r.undumpable, false, r.error, r.proc_private};
  if (pid <= 0) return i;
  if (r.proc_private && proc_hidden(pid) == 0)
    return fail("the candidate's runner reports a private /proc, but /proc/{}/mountinfo shows none", pid);
  auto c = read_proc_confinement(pid);
  if (!c) return i;  // gone already: its death is the evaluation's to report
  for (int u : c->uid)
    if (u != r.uid)
      return fail("the candidate's runner reports uid {}, but /proc/{}/status says {} {} {} {}", r.uid, pid, c->uid[0],
                  c->uid[1], c->uid[2], c->uid[3]);
  if (r.seccomp && (c->seccomp != 2 || c->no_new_privs != 1))
    return fail("the candidate's runner reports a seccomp filter, but /proc/{}/status says Seccomp {} NoNewPrivs {}",
                pid, c->seccomp, c->no_new_privs);
  i.outside_checked = true;
  return i;
}

}  // namespace kevo
