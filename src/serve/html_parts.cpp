#include "serve/html_parts.h"

#include <ctime>

#include <fmt/format.h>

#include "report/html.h"

namespace kevo::serve {

std::string esc(std::string_view s) { return report::escape(s); }

std::string layout(const PageHead& h, const std::string& content) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  s += "<title>" + esc(h.title) + "</title>";
  s += "<link rel=\"stylesheet\" href=\"/app.css\"><script src=\"/app.js\" defer></script></head>\n";
  s += fmt::format("<body data-page=\"{}\" data-run=\"{}\" data-version=\"{}\">\n", esc(h.page), h.run, h.version);
  s += "<header><a href=\"/\">kevo runs</a>" + h.crumbs_html +
       " <span id=\"live\" class=\"muted\" title=\"live updates\"></span></header>\n";
  return s + content + "\n</body></html>\n";
}

std::string time_text(double unix_s) {
  if (unix_s <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string cand_link(int64_t run, int64_t id, const std::string& label) {
  if (id <= 0) return "-";
  return fmt::format(R"(<a href="/runs/{}/candidates/{}">{}</a>)", run, id, label.empty() ? "#" + std::to_string(id) : esc(label));
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string kv_row(const std::string& label, const std::string& value_html, const std::string& live) {
  if (live.empty()) return fmt::format("<tr><th>{}</th><td>{}</td></tr>", esc(label), value_html);
  return fmt::format("<tr><th>{}</th><td data-live=\"{}\">{}</td></tr>", esc(label), esc(live), value_html);
}

std::string html_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                       const std::string& cls) {
  std::string s = cls.empty() ? "<table><tr>" : "<table class=\"" + esc(cls) + "\"><tr>";
  for (const auto& h : head) s += "<th>" + esc(h) + "</th>";
  s += "</tr>";
  for (const auto& r : rows) {
    s += "<tr>";
    for (const auto& c : r) s += "<td>" + c + "</td>";
    s += "</tr>";
  }
  return s + "</table>";
}

}  // namespace kevo::serve
