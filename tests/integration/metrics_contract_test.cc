// The metrics contract of the shipped dashboard and alert rules: the real
// server and agent are scraped, and every metric name that
// deploy/grafana/npuperf.json and deploy/prometheus/alerts.yml use must be in
// the scrapes; promtool checks the rules, runs their unit tests and lints
// both scrapes. promtool comes from Debian's `prometheus` package
// (deploy/install-deps.sh): without it the test fails, it never skips.
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/agent_service.grpc.pb.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every sample name and every "# TYPE" family of a text-format scrape.
std::set<std::string> NamesIn(const std::string& scrape) {
  std::set<std::string> names;
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (absl::StartsWith(line, "# TYPE ")) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() >= 3) names.insert(f[2]);
    } else if (!line.empty() && line[0] != '#') {
      names.insert(std::string(line.substr(0, line.find_first_of("{ "))));
    }
  }
  return names;
}

// The metric names a PromQL text (or rule file) refers to: npuperf_* and
// process_* identifiers.
std::set<std::string> MetricNamesUsed(const std::string& text) {
  static const std::regex name(R"(\b(npuperf_[a-z0-9_]+|process_[a-z0-9_]+)\b)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

// The first value of a sample whose line starts with `prefix`, or -1.
double SampleValue(const std::string& scrape, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (absl::StartsWith(line, prefix)) {
      return std::stod(std::string(line.substr(line.rfind(' ') + 1)));
    }
  }
  return -1;
}

// Scrapes until `want` is in the scrape (gauges refresh every 5 s).
std::string ScrapeUntil(const std::string& address, const std::string& want, seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  std::string body;
  while (WallClock().MonotonicNow() < deadline) {
    auto got = HttpGet(address, "/metrics");
    if (got.ok()) body = *got;
    if (body.find(want) != std::string::npos) return body;
    WallClock().SleepFor(std::chrono::milliseconds(200));
  }
  ADD_FAILURE() << "no '" << want << "' on " << address << " within " << timeout.count() << " s";
  return body;
}

// The raw response head of GET /metrics (the Content-Type header).
std::string ResponseHead(const std::string& address) {
  const int fd = ConnectTcp(address);
  if (fd < 0) return "";
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) return "";
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out.substr(0, out.find("\r\n\r\n"));
}

CommandResult Promtool(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  std::vector<std::string> argv = {"promtool"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, dir, {}, seconds(60));
}

// Traffic that makes the labelled families appear: a collection no device
// can take (queue gauges), a refused agent call, a watch the client cancels.
std::string MakeTraffic(Cluster& c) {
  auto sub = c.Cli({"--format", "json", "submit", "--quick",
                    (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name",
                    "kernel", "--soc", "NoSuchSoc", "--no-wait"});
  // The collection is queued whatever the exit code (--no-wait exits 1 until
  // issue 17's CLI item lands): the id is what counts here.
  nlohmann::json j = nlohmann::json::parse(sub.out, nullptr, false);
  const std::string id = j.is_object() ? j.value("id", "") : "";
  EXPECT_FALSE(id.empty()) << sub.out << sub.err;
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  {
    grpc::ClientContext ctx;
    v1::ReportProgressRequest req;
    req.set_agent_id("a-nobody");
    req.set_job_id(1);
    v1::ReportProgressResponse resp;
    EXPECT_FALSE(v1::AgentService::NewStub(channel)->ReportProgress(&ctx, req, &resp).ok());
  }
  grpc::ClientContext watch;
  v1::WatchCollectionRequest req;
  req.set_collection_id(id);
  auto stream = v1::CollectionService::NewStub(channel)->WatchCollection(&watch, req);
  v1::WatchCollectionResponse first;
  EXPECT_TRUE(stream->Read(&first));
  watch.TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  return id;
}

TEST(MetricsContractTest, DashboardAndAlertsUseOnlyExportedMetrics) {
  ASSERT_EQ(RunCommand({"sh", "-c", "command -v promtool"}, "/").exit_code, 0)
      << "promtool is missing: apt-get install prometheus (deploy/install-deps.sh)";
  Cluster c;
  c.Start("0-1");
  auto line = c.agent->WaitForLine("metrics on", seconds(10));
  ASSERT_TRUE(line.ok()) << line.status();
  const std::string agent_metrics = AddressAfter(*line, "metrics on");
  ScrapeUntil(agent_metrics, "npuperf_agent_registered 1", seconds(15));
  MakeTraffic(c);
  auto version = c.Cli({"version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("server   npuperf-server "), std::string::npos) << version.out;

  const std::string server =
      ScrapeUntil(c.metrics_address, "npuperf_server_queue_depth{", seconds(15));
  const std::string agent = ScrapeUntil(agent_metrics, "npuperf_agent_registered 1", seconds(5));
  // The state gauges: the queued collection, its age, the per-device states.
  EXPECT_EQ(
      SampleValue(server,
                  "npuperf_server_queue_depth{priority=\"0\",soc=\"other\",team=\"default\"}"),
      1)
      << server;
  EXPECT_GE(SampleValue(server, "npuperf_server_queue_oldest_age_seconds "), 0);
  EXPECT_EQ(SampleValue(server, "npuperf_server_device_state{device=\"1\""), 0) << server;
  EXPECT_NE(server.find("state=\"idle\"} 1"), std::string::npos) << server;
  // A watch the client cancelled counts as CANCELLED.
  EXPECT_EQ(
      SampleValue(
          server,
          "npuperf_server_grpc_requests_total{code=\"CANCELLED\",method=\"WatchCollection\"}"),
      1)
      << server;
  EXPECT_NE(ResponseHead(c.metrics_address)
                .find("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
            std::string::npos);

  std::set<std::string> exported = NamesIn(server);
  exported.merge(NamesIn(agent));
  const std::filesystem::path deploy = SourceDir() / "deploy";
  const std::string alerts = ReadFile(deploy / "prometheus/alerts.yml");
  nlohmann::json dash = nlohmann::json::parse(ReadFile(deploy / "grafana/npuperf.json"));
  ASSERT_EQ(dash["templating"]["list"][0]["type"], "datasource");
  std::string queries;
  int targets = 0;
  for (const auto& p : dash["panels"]) {
    if (p["type"] == "row") continue;
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
    for (const auto& t : p["targets"]) {
      queries += t["expr"].get<std::string>() + "\n";
      ++targets;
    }
  }
  EXPECT_GE(targets, 20);
  const std::set<std::string> used = [&] {
    auto u = MetricNamesUsed(queries);
    u.merge(MetricNamesUsed(alerts));
    return u;
  }();
  EXPECT_GE(used.size(), 25u);
  for (const std::string& name : used)
    EXPECT_TRUE(exported.contains(name)) << name << " is not exported";

  // promtool: the rules, their unit tests, and the lint of both scrapes.
  // Absolute paths, run in the test's directory: RunCommand leaves its
  // output files where it runs, never in the source tree.
  auto check =
      Promtool({"check", "rules", (deploy / "prometheus/alerts.yml").string()}, c.dir.path());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  auto test =
      Promtool({"test", "rules", (deploy / "prometheus/alerts_test.yml").string()}, c.dir.path());
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
  for (const auto& [name, body] : {std::pair{"server", server}, std::pair{"agent", agent}}) {
    const std::filesystem::path file = c.dir.path() / absl::StrCat(name, ".prom");
    std::ofstream(file) << body;
    auto lint =
        RunCommand({"sh", "-c", absl::StrCat("promtool check metrics < '", file.string(), "'")},
                   c.dir.path(), {}, seconds(60));
    EXPECT_EQ(lint.exit_code, 0) << name << ": " << lint.out << lint.err;
    EXPECT_EQ(lint.out + lint.err, "") << name;
  }
  EXPECT_EQ(c.agent->Stop(), 0);
  EXPECT_EQ(c.server->Stop(), 0);
}

}  // namespace
}  // namespace npuperf::testing
