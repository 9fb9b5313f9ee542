// The two files the pages load from this server (GET /app.js, GET /app.css): no CDN, no build
// step, nothing inline, so the pages work offline under a Content-Security-Policy that allows only
// this origin's scripts and styles.
//
// app.js keeps a page current: it polls the JSON API (every 2 s while the run is going, 10 s
// otherwise), writes figures into elements marked data-live="KEY" from the document's "display"
// strings, reloads the chart images when the run's version changes, and rebuilds the latest
// candidates' rows. It writes text (textContent) and builds elements, never HTML.
#pragma once

#include <string>

namespace kevo::serve {

const std::string& app_js();
const std::string& app_css();  // the report's stylesheet and this server's additions

}  // namespace kevo::serve
