// Where a chart's text lands: every <text> of an SVG with the box it takes (its width estimated as
// the charts estimate it, report/svg_text.h), checked against the SVG's viewBox. A label outside
// it is cut off by the browser.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "report/svg_text.h"

namespace kevo::testing {

struct SvgText {
  std::string text;  // unescaped, its <title> left out
  double x0 = 0, x1 = 0, top = 0, bottom = 0;
};

inline std::string svg_attr(const std::string& tag, const std::string& name, const std::string& fallback = "") {
  std::smatch m;
  if (std::regex_search(tag, m, std::regex("\\s" + name + "=\"([^\"]*)\""))) return m[1];
  return fallback;
}

inline std::string svg_unescape(std::string s) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1)) s.replace(p, std::string(from).size(), to);
  return s;
}

inline std::vector<SvgText> svg_texts(const std::string& svg) {
  std::vector<SvgText> out;
  const std::regex text_re("<text([^>]*)>(.*?)</text>"), title_re("<title>.*?</title>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), text_re), end; it != end; ++it) {
    const std::string tag = (*it)[1], body = std::regex_replace(std::string((*it)[2]), title_re, "");
    SvgText t{svg_unescape(body)};
    const double x = std::stod(svg_attr(tag, "x", "0")), y = std::stod(svg_attr(tag, "y", "0"));
    const double size = std::stod(svg_attr(tag, "font-size", "16"));
    const double w = report::text_width(t.text, size);
    const std::string anchor = svg_attr(tag, "text-anchor", "start");
    t.x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
    t.x1 = t.x0 + w;
    t.top = y - 0.8 * size;     // ascenders
    t.bottom = y + 0.2 * size;  // descenders
    out.push_back(t);
  }
  return out;
}

// The texts that do not fit inside the viewBox, one line each ("" when all fit).
inline std::string svg_texts_outside(const std::string& svg) {
  std::smatch m;
  if (!std::regex_search(svg, m, std::regex("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\""))) return "no viewBox";
  const double w = std::stod(m[1]), h = std::stod(m[2]);
  std::string bad;
  for (const auto& t : svg_texts(svg))
    if (t.x0 < 0 || t.x1 > w || t.top < 0 || t.bottom > h)
      bad += "'" + t.text + "' at [" + std::to_string(t.x0) + ", " + std::to_string(t.x1) + "] x [" +
             std::to_string(t.top) + ", " + std::to_string(t.bottom) + "] in " + m[1].str() + " x " + m[2].str() + "\n";
  return bad;
}

}  // namespace kevo::testing
