// The pages only the server's web pages have (report.h, "In the browser"):
// the team's start page, the devices page, the login form and the
// navigation bar.
#include "npuperf/v1/device_service.pb.h"
#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"

namespace npuperf::report {
namespace {

std::string CollectionStateText(v1::CollectionState s) {
  std::string n = v1::CollectionState_Name(s);
  return n.rfind("COLLECTION_STATE_", 0) == 0 ? n.substr(17) : n;
}

std::string CollectionsTable(const std::vector<v1::Collection>& collections) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::Collection& c : collections) {
    const auto& n = c.counts();
    rows.push_back({RawCell(Link("/ui/collections/" + c.id(), c.id())),
                    CollectionStateText(c.state()), internal::Time(c.created_at()),
                    Cell(std::to_string(n.succeeded()) + "/" + std::to_string(n.total()), "num"),
                    internal::LabelsText(c.spec().labels())});
  }
  return rows.empty() ? Para("no collections yet")
                      : Table("collections",
                              {"collection", "state", "created", "succeeded", "labels"}, rows);
}

std::string RoundsTable(const std::vector<v1::Round>& rounds) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::Round& r : rounds) {
    const std::string id = std::to_string(r.id());
    rows.push_back(
        {RawCell(Link("/ui/rounds/" + id, id)),
         RawCell(Link("/ui/history?op=" + UrlComponent(r.operator_name()), r.operator_name())),
         r.case_id(), RawCell(Link("/ui/collections/" + r.collection_id(), r.collection_id())),
         Cell(Num(r.evidence().duration().aggregate_us(), 3), "num"),
         r.evidence().bound().label()});
  }
  return rows.empty()
             ? Para("no rounds yet")
             : Table("rounds", {"round", "operator", "case", "collection", "kernel us", "bound"},
                     rows);
}

std::string DeviceName(const std::string& host, int32_t device_id) {
  return host.empty() ? "device " + std::to_string(device_id)
                      : host + ":" + std::to_string(device_id);
}

std::string QuarantinesTable(const std::vector<v1::DeviceQuarantine>& quarantines) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::DeviceQuarantine& q : quarantines) {
    const bool current = !q.has_released_at();
    std::string released = "-";
    if (!current) {
      released = internal::Time(q.released_at()) + " by " + q.released_by();
      if (!q.release_note().empty()) released += ": " + q.release_note();
    }
    rows.push_back({Cell(DeviceName(q.host(), q.device_id())), q.soc(), q.source(),
                    internal::Time(q.since()),
                    q.has_suspect_since() ? internal::Time(q.suspect_since()) : std::string("-"),
                    Cell(current ? "quarantined" : "released", current ? "critical" : ""),
                    q.reason(), released});
  }
  return rows.empty() ? Para("no device has been quarantined")
                      : Table("quarantines",
                              {"device", "SoC", "by", "since", "rounds suspect from", "state",
                               "reason", "released"},
                              rows);
}

std::string CanariesTable(const std::vector<v1::Canary>& canaries) {
  std::vector<std::vector<Cell>> rows;
  for (const v1::Canary& c : canaries) {
    const std::string round = c.round_id() > 0 ? std::to_string(c.round_id()) : "-";
    rows.push_back(
        {Cell(std::to_string(c.id()), "num"), internal::Time(c.created_at()),
         DeviceName(c.host(), c.device_id()), c.soc(),
         Cell(c.state(), c.state() == "slow" || c.state() == "failed" ? "critical" : ""),
         Cell(c.kernel_us() > 0 ? Num(c.kernel_us(), 2) : "-", "num"),
         Cell(c.reference_us() > 0 ? c.reference() + " " + Num(c.reference_us(), 2) : "-", "num"),
         Cell(c.reference_us() > 0 ? Num(c.excess_pct(), 1) + " %" : "-", "num"), c.reason()});
  }
  return rows.empty() ? Para("no canary has run (the server runs them with --canary-interval)")
                      : Table("canaries",
                              {"canary", "created", "device", "SoC", "state", "kernel us",
                               "against", "excess", "why"},
                              rows);
}

}  // namespace

std::string RenderDevicesPage(const std::vector<v1::DeviceQuarantine>& quarantines,
                              const std::vector<v1::Canary>& canaries) {
  std::string body = Section("quarantines", "Quarantines", QuarantinesTable(quarantines));
  body += Section("canaries", "Canaries", CanariesTable(canaries));
  body += Para(
      "a quarantined device takes no job but its canaries; rounds it produced from 'rounds suspect "
      "from' until its release are flagged device_suspect in comparisons (docs/operations.md, "
      "\"Canaries\")",
      "note");
  return Page("devices", "npuperf: devices", "quarantines and the newest canaries", body);
}

std::string UrlComponent(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

std::string Link(std::string_view href, std::string_view text) {
  return "<a href=\"" + Escape(href) + "\">" + Escape(text) + "</a>";
}

std::string RenderIndexPage(const std::string& team, const std::vector<v1::Collection>& collections,
                            const std::vector<v1::Round>& rounds) {
  std::string body = Section("collections", "Recent collections", CollectionsTable(collections));
  body += Section("rounds", "Recent rounds", RoundsTable(rounds));
  body += Section(
      "compare", "Compare",
      "<form method=\"get\" action=\"/ui/compare\" class=\"compare\"><label>baseline "
      "<input name=\"a\" required></label> <label>candidate <input name=\"b\" required></label> "
      "<button type=\"submit\">compare</button></form>" +
          Para("two round ids, or two collection ids", "note"));
  return Page("index", "npuperf: team " + team, "the newest collections and their rounds", body);
}

std::string RenderLoginPage(const std::string& next, const std::string& error) {
  std::string body;
  if (!error.empty()) body += Para(error, "critical error");
  body +=
      "<form method=\"post\" action=\"/ui/login\" class=\"login\">"
      "<input type=\"hidden\" name=\"next\" value=\"" +
      Escape(next) +
      "\"><label>team token <input type=\"password\" name=\"token\" id=\"token\" "
      "autocomplete=\"current-password\" required></label> "
      "<button type=\"submit\">log in</button></form>";
  body += Para(
      "the token is sent once; the browser keeps a session cookie (HttpOnly, SameSite=Strict) "
      "until you log out or it expires.",
      "note");
  return Page("login", "npuperf: log in", "read-only pages of your team's evidence", body);
}

std::string WithNav(std::string page,
                    const std::vector<std::pair<std::string, std::string>>& links) {
  std::string nav = "<nav class=\"ui\">";
  for (const auto& [href, text] : links) nav += Link(href, text) + " ";
  nav +=
      "<form method=\"post\" action=\"/ui/logout\" class=\"logout\">"
      "<button type=\"submit\">log out</button></form></nav>\n";
  const size_t h1 = page.find("<h1>");
  page.insert(h1 == std::string::npos ? page.size() : h1, nav);
  return page;
}

}  // namespace npuperf::report
