// The instruction timeline through the service (issue 32): real server, agent and msprof-sim. A
// formal round, then `npuperf timeline ROUND --wait`: the timeline job runs on the round's device
// with its target, is anchored to it, archives the trace with biu_perf.db and ascend_task.db, and
// stays out of the operator's series. msprof-sim's timeline fault makes device 0 pipeline the
// kernel (same-lane compute+movement overlap) and device 1 run it serially (none).
#include <filesystem>
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string RmsNorm() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

// One standard round (no warm-up, one repeat) of the demo operator on `device`: its id.
int64_t FormalRound(Cluster& c, const std::string& device, const std::string& mode = "") {
  std::vector<std::string> args = {"--format",     "json",      "submit", RmsNorm(),   "--op-name",
                                   kRmsNormKernel, "--warm-up", "0",      "--devices", device};
  if (!mode.empty()) args.push_back(mode);
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out;
  if (col.jobs_size() != 1) return 0;
  EXPECT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << col.jobs(0).reason();
  return col.jobs(0).round_id();
}

nlohmann::json Json(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

// proto3 JSON: int64 as a string, absent when 0.
int64_t Int(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return 0;
  return j[key].is_string() ? std::stoll(j[key].get<std::string>()) : j[key].get<int64_t>();
}

TEST(TimelineTest, AFormalRoundsTimelineRunsOnItsDeviceAndShowsItsPipelining) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0-1", "agent",
                         {{"MSPROF_SIM_FAULT", "timeline:pipelined@dev=0;timeline:serial@dev=1"}});
  const int64_t pipelined = FormalRound(c, "0"), serial = FormalRound(c, "1");
  ASSERT_FALSE(HasFailure());

  // A quick round is no formal round: refused, exit 1, nothing queued.
  const int64_t quick = FormalRound(c, "0", "--quick");
  auto refused = c.Cli({"timeline", std::to_string(quick)});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("quick round"), std::string::npos) << refused.err;

  // The user's Tile-DAG attestation claims the kernel pipelines: only the timeline that shows
  // same-lane overlap makes that "proven".
  const fs::path attestation = c.dir.path() / "tile_dag.json";
  {
    std::ofstream f(attestation);
    f << R"({"schema_version": 1, "target_op_name": ")" << kRmsNormKernel
      << R"(", "pipeline_evidence_status": "proven", "tile_dag": "double-buffered tiles"})";
  }
  auto t = c.Cli({"--format", "json", "timeline", std::to_string(pipelined), std::to_string(serial),
                  "--tile-dag-attestation", attestation.string(), "--wait", "--timeout", "5m"});
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err << "\nagent log:\n" << c.agent->Log();
  const nlohmann::json rounds = Json(t)["rounds"];
  ASSERT_EQ(rounds.size(), 2u) << t.out;
  int64_t overlap[2] = {-1, -1};
  for (const nlohmann::json& r : rounds) {
    const nlohmann::json& e = r["evidence"];
    const nlohmann::json& tl = e["timeline"];
    const int64_t anchor = Int(tl, "anchor_round_id");
    ASSERT_TRUE(anchor == pipelined || anchor == serial) << tl.dump(2);
    const int device = anchor == pipelined ? 0 : 1;
    EXPECT_EQ(e["fingerprint"].value("device_id", 0), device) << "on the round's own device";
    EXPECT_EQ(e["fingerprint"]["mode"], "timeline");
    EXPECT_EQ(tl["attribution_status"], "unique_exact_target_window") << tl.dump(2);
    EXPECT_EQ(tl["pipeline_evidence_status"], "requires_tile_dag_correlation") << "never proven";
    EXPECT_GT(tl.value("monitored_lanes", 0), 0) << tl.dump(2);
    EXPECT_GT(Int(tl, "biu_rows"), 0) << tl.dump(2);
    EXPECT_GT(Int(tl, "ascend_task_rows"), 0) << tl.dump(2);
    EXPECT_FALSE(e.contains("duration")) << "instruction profiling perturbs durations";
    overlap[device] = Int(tl, "overlap_ns");
    EXPECT_EQ(tl["tile_dag_attestation_sha256"].get<std::string>().size(), 64u) << tl.dump(2);
    EXPECT_EQ(tl["pipeline_overlap_status"], device == 0 ? "proven" : "unverified") << tl.dump(2);
    EXPECT_FALSE(tl["roofline_terminal_status"].get<std::string>().empty());
    if (!tl["completion_eligible"].get<bool>()) {
      EXPECT_FALSE(tl["completion_blockers"].empty()) << "a round not closed says why";
    }
  }
  EXPECT_GT(overlap[0], 0) << "the pipelined kernel overlaps compute and movement on a lane";
  EXPECT_EQ(overlap[1], 0) << "the serial kernel does not";

  // The timelines stay out of the operator's series: the three rounds measured.
  auto listed = c.Cli({"--format", "json", "rounds", "inplace_add_rmsnorm"});
  EXPECT_EQ(Json(listed)["rounds"].size(), 3u) << listed.out;
  // A formal round and its timeline are never compared.
  const std::string timeline_round = rounds[0]["id"].get<std::string>();
  const std::string anchor =
      std::to_string(Int(rounds[0]["evidence"]["timeline"], "anchor_round_id"));
  auto cmp = c.Cli({"--format", "json", "compare", anchor, timeline_round});
  EXPECT_EQ(Json(cmp)["result"]["comparison"]["verdict"], "VERDICT_NOT_COMPARABLE") << cmp.out;

  // The raw archive holds the trace, biu_perf.db and ascend_task.db.
  v1::Round archived;
  for (int i = 0; i < 600 && archived.artifacts_size() == 0; ++i) {
    auto got = c.GetRound(std::stoll(timeline_round));
    if (got.ok()) archived = *got;
    if (archived.artifacts_size() == 0) WallClock().SleepFor(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(archived.artifacts_size(), 1) << c.agent->Log();
  const fs::path dir = c.dir.path() / "fetched";
  auto fetched = c.Cli({"fetch", timeline_round, dir.string()});
  ASSERT_EQ(fetched.exit_code, 0) << fetched.out << fetched.err;
  int traces = 0, biu = 0, tasks = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    traces += name.starts_with("msprof_") && name.ends_with(".json") ? 1 : 0;
    biu += name == "biu_perf.db" ? 1 : 0;
    tasks += name == "ascend_task.db" ? 1 : 0;
  }
  EXPECT_GE(traces, 1);
  EXPECT_EQ(biu, 1);
  EXPECT_EQ(tasks, 1);
}

}  // namespace
}  // namespace npuperf::testing
