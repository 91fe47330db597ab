// The reference's timeline rules (reference-scripts.md §2.10) on hand-made
// Chrome traces: exact unique target window, same-lane vs cross-lane overlap,
// decimal timestamps beyond 2^53 ns, and the streaming reader's edges.
#include "evidence/timeline.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/trace_stream.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

class TimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("timeline_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  fs::path Write(const std::string& text, const std::string& name = "msprof_20260101000000.json") {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  static std::string Lane(int pid, int tid, const std::string& name) {
    return R"({"name":"thread_name","ph":"M","pid":)" + std::to_string(pid) + R"(,"tid":)" +
           std::to_string(tid) + R"(,"args":{"name":")" + name + R"("}})";
  }
  static std::string X(const std::string& name, int pid, int tid, const std::string& ts,
                       const std::string& dur) {
    return R"({"name":")" + name + R"(","ph":"X","pid":)" + std::to_string(pid) + R"(,"tid":)" +
           std::to_string(tid) + R"(,"ts":")" + ts + R"(","dur":")" + dur +
           R"(","args":{"Core Type":"AIV","Block Id":"0","Checkpoint Info":"0"}})";
  }
  static std::string Trace(const std::vector<std::string>& events) {
    std::string out = "[";
    for (size_t i = 0; i < events.size(); ++i) out += (i ? ",\n" : "\n") + events[i];
    return out + "\n]\n";
  }
  TimelineEvidence Summarize(const fs::path& p, TimelineOptions o = {}) {
    if (o.op_name.empty()) o.op_name = "Add_1";
    absl::StatusOr<TimelineEvidence> t = SummarizeTimeline(p, o);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : TimelineEvidence{};
  }
  fs::path dir_;
};

TEST(DecimalTimeTest, ParsesMicrosecondsExactly) {
  EXPECT_EQ(*ParseMicrosAsNanos("12.5", "ts"), 12500);
  EXPECT_EQ(*ParseMicrosAsNanos("1.25e1", "ts"), 12500);
  EXPECT_EQ(*ParseMicrosAsNanos("1e-3", "ts"), 1);
  EXPECT_EQ(*ParseMicrosAsNanos("0", "ts"), 0);
  EXPECT_EQ(*ParseMicrosAsNanos("0.0010", "ts"), 1);
  // 1.78e18 ns is far beyond 2^53 (9.007e15): a double would lose the last digits.
  EXPECT_EQ(*ParseMicrosAsNanos("1780000000000000.123", "ts"), 1780000000000000123);
  EXPECT_EQ(*ParseMicrosAsNanos("1780000000000000.124", "ts") -
                *ParseMicrosAsNanos("1780000000000000.123", "ts"),
            1);
  EXPECT_EQ(FormatNanosAsMicros(1780000000000000123), "1780000000000000.123");
  EXPECT_EQ(FormatNanosAsMicros(1500), "1.500");
  EXPECT_EQ(FormatNanosAsMicros(-250), "-0.250");
}

TEST(DecimalTimeTest, RejectsWhatIsNotExact) {
  for (const char* bad : {"", "-1", "+1", "1.0001", "1e-4", "abc", "1.2.3", "1e", "1 ",
                          "9223372036854775.808", "1e400"}) {
    absl::StatusOr<int64_t> v = ParseMicrosAsNanos(bad, "event #3 ts");
    EXPECT_FALSE(v.ok()) << bad;
    EXPECT_NE(std::string(v.status().message()).find("event #3 ts"), std::string::npos) << bad;
  }
}

TEST(ClassifyTest, ReferenceNamingRule) {
  EXPECT_EQ(ClassifyInstruction("MTE2"), PipeClass::kMovement);
  EXPECT_EQ(ClassifyInstruction("FIXP"), PipeClass::kMovement);
  EXPECT_EQ(ClassifyInstruction("VEC"), PipeClass::kCompute);
  EXPECT_EQ(ClassifyInstruction("CUBE_FP16"), PipeClass::kCompute);
  EXPECT_EQ(ClassifyInstruction("MAC"), PipeClass::kCompute);
  EXPECT_EQ(ClassifyInstruction("M"), PipeClass::kCompute);
  EXPECT_EQ(ClassifyInstruction("SCALARLDST"), PipeClass::kScalar);
  EXPECT_EQ(ClassifyInstruction("SU"), PipeClass::kScalar);
  EXPECT_EQ(ClassifyInstruction("WAIT_FLAG"), PipeClass::kWait);
  EXPECT_EQ(ClassifyInstruction("BARRIER"), PipeClass::kWait);
  EXPECT_EQ(ClassifyInstruction("MTE4"), PipeClass::kUnknown);
  EXPECT_EQ(ClassifyInstruction("MOV"), PipeClass::kUnknown);
}

TEST_F(TimelineTest, UniqueTargetAndSameLaneOverlapDeduplicated) {
  const fs::path p =
      Write(Trace({Lane(1, 1, "Ascend Hardware"), Lane(100, 1, "Group0-aiv0"),
                   X("Add_1", 1, 1, "1000.000", "10.000"), X("MTE2", 100, 1, "1000.000", "4.000"),
                   X("VEC", 100, 1, "1002.000", "4.000"), X("VEC", 100, 1, "1003.000", "2.000"),
                   X("SCALAR", 100, 1, "1006.000", "1.000")}));
  const TimelineEvidence t = Summarize(p);
  EXPECT_EQ(t.attribution_status, "unique_exact_target_window");
  EXPECT_EQ(t.target_start_ns, 1000000);
  EXPECT_EQ(t.target_duration_ns, 10000);
  ASSERT_EQ(t.monitored_lanes.size(), 1u);
  EXPECT_EQ(t.monitored_lanes[0].name, "Group0-aiv0");
  // Union of compute [1002,1006) against movement [1000,1004): 2 us, once.
  EXPECT_EQ(t.overlap_ns, 2000);
  EXPECT_EQ(t.raw_event_pairs, 2);
  EXPECT_EQ(t.pipe_event_counts.at("compute"), 2);
  EXPECT_EQ(t.pipe_event_counts.at("movement"), 1);
  EXPECT_EQ(t.pipe_event_counts.at("scalar"), 1);
  EXPECT_EQ(t.instruction_event_counts.at("VEC"), 2);
  EXPECT_EQ(t.pipeline_evidence_status, "requires_tile_dag_correlation");
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[1].start_offset_ns, 2000);
  const auto j = nlohmann::json::parse(TimelineToJson(t));
  EXPECT_EQ(j["same_lane_pipe_interval_overlap"]["pair_overlap_us"]["compute+movement"], "2.000");
  EXPECT_EQ(j["target_task"]["start_us"], "1000.000");
  EXPECT_EQ(j["completion_eligible"], false);
  EXPECT_EQ(j["events"][0]["args"]["Core Type"], "AIV");
  EXPECT_EQ(j["limitations"].size(), 4u);
}

TEST_F(TimelineTest, CrossLaneConcurrencyIsNeverOverlap) {
  const fs::path p =
      Write(Trace({Lane(100, 1, "Group0-aiv0"), Lane(100, 2, "Group0-aiv1"),
                   X("Add_1", 1, 1, "1000.000", "10.000"), X("MTE2", 100, 1, "1000.000", "4.000"),
                   X("VEC", 100, 2, "1000.000", "4.000")}));
  const TimelineEvidence t = Summarize(p);
  EXPECT_EQ(t.monitored_lanes.size(), 2u);
  EXPECT_EQ(t.overlap_ns, 0);
  EXPECT_EQ(t.raw_event_pairs, 0);
  EXPECT_EQ(t.pipeline_evidence_status, "requires_tile_dag_correlation");
}

TEST_F(TimelineTest, DuplicateAndMissingTargetsAreStatuses) {
  const fs::path dup = Write(
      Trace({Lane(100, 1, "Group0-aiv0"), X("Add_1", 1, 1, "1000.000", "10.000"),
             X("Add_1", 1, 1, "2000.000", "10.000"), X("MTE2", 100, 1, "1000.000", "4.000")}));
  TimelineEvidence t = Summarize(dup);
  EXPECT_EQ(t.attribution_status, "duplicate_target_window");
  EXPECT_EQ(t.target_candidates, 2);
  EXPECT_EQ(t.pipeline_evidence_status, "unverified");
  EXPECT_EQ(t.overlap_ns, 0);
  EXPECT_FALSE(t.target_lane.has_value());
  // "Add_10" is not "Add_1": exact names only.
  const fs::path missing = Write(Trace({X("Add_10", 1, 1, "1000.000", "10.000")}), "m.json");
  t = Summarize(missing);
  EXPECT_EQ(t.attribution_status, "target_not_found");
  EXPECT_EQ(t.pipeline_evidence_status, "unverified");
}

TEST_F(TimelineTest, DecimalTimestampsBeyond2To53Nanoseconds) {
  // Intervals 1 ns apart at 1.78e18 ns: binary floats would merge them.
  const fs::path p =
      Write(Trace({Lane(100, 1, "Group3-aic0"), X("Add_1", 1, 1, "1780000000000000.000", "0.010"),
                   X("MTE2", 100, 1, "1780000000000000.000", "0.003"),
                   X("CUBE", 100, 1, "1780000000000000.002", "0.003"),
                   X("MTE1", 100, 1, "1780000000000000.005", "0.001"),
                   X("MAC", 100, 1, "1780000000000000.011", "0.001")}));
  const TimelineEvidence t = Summarize(p);
  EXPECT_EQ(t.target_start_ns, 1780000000000000000);
  EXPECT_EQ(t.overlap_ns, 1);             // [2,3) only; MTE1 starts where CUBE ends
  EXPECT_EQ(t.events_outside_window, 1);  // MAC at +11 ns is after the 10 ns window
  const auto j = nlohmann::json::parse(TimelineToJson(t));
  EXPECT_EQ(j["same_lane_pipe_interval_overlap"]["pair_overlap_us"]["compute+movement"], "0.001");
  EXPECT_EQ(j["target_task"]["start_us"], "1780000000000000.000");
}

TEST_F(TimelineTest, TheWindowExportsAsATracePerfettoLoads) {
  // String pids/tids and timestamps near 1.78e15 us, as Ascend writes them.
  const fs::path p =
      Write(Trace({Lane(1, 1, "Ascend Hardware"), Lane(100, 1, "Group0-aiv0"),
                   Lane(100, 2, "Group0-aiv1"), X("Add_1", 1, 1, "1780000000000000.000", "0.010"),
                   X("MTE2", 100, 1, "1780000000000000.001", "0.003"),
                   X("VEC", 100, 2, "1780000000000000.002", "0.004")}));
  const TimelineEvidence t = Summarize(p);
  const auto j = nlohmann::json::parse(TimelineToChromeTrace(t));
  EXPECT_EQ(j["displayTimeUnit"], "ns");
  EXPECT_EQ(j["otherData"]["time_origin_us"], "1780000000000000.000");
  std::map<std::string, nlohmann::json> x;
  std::map<int, std::string> lanes;
  for (const auto& e : j["traceEvents"]) {
    EXPECT_TRUE(e["pid"].is_number_integer());
    if (e["ph"] == "X") x[e["name"]] = e;
    if (e["name"] == "thread_name") lanes[e["tid"].get<int>()] = e["args"]["name"];
  }
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x["Add_1"]["ts"].get<double>(), 0.0);
  EXPECT_EQ(x["Add_1"]["dur"].get<double>(), 0.010);
  EXPECT_EQ(x["MTE2"]["ts"].get<double>(), 0.001);  // 1 ns after the start, not lost
  EXPECT_EQ(x["VEC"]["ts"].get<double>(), 0.002);
  EXPECT_EQ(x["VEC"]["args"]["pipe"], "compute");
  EXPECT_EQ(x["VEC"]["args"]["Core Type"], "AIV");
  EXPECT_NE(x["MTE2"]["tid"], x["VEC"]["tid"]);  // one thread per lane
  EXPECT_EQ(lanes[x["MTE2"]["tid"].get<int>()], "Group0-aiv0");
  EXPECT_EQ(lanes[x["VEC"]["tid"].get<int>()], "Group0-aiv1");
}

TEST_F(TimelineTest, InstructionEventsBeforeTheTargetTakeASecondPass) {
  const std::vector<std::string> events = {
      Lane(100, 1, "Group0-aiv0"), X("MTE2", 100, 1, "1000.000", "4.000"),
      X("VEC", 100, 1, "1002.000", "4.000"), X("Add_1", 1, 1, "1000.000", "10.000"),
      X("MTE3", 100, 1, "1005.000", "2.000")};
  const TimelineEvidence t = Summarize(Write(Trace(events)));
  EXPECT_EQ(t.passes, 2);
  // compute [1002,1006) vs movement [1000,1004)+[1005,1007): 2 + 1 us.
  EXPECT_EQ(t.overlap_ns, 3000);
  EXPECT_EQ(t.raw_event_pairs, 2);
  EXPECT_EQ(t.events_in_window, 3);
}

TEST_F(TimelineTest, LocallyUnorderedEventsAreExactLateOnesCounted) {
  const std::vector<std::string> events = {
      Lane(100, 1, "Group0-aiv0"), X("Add_1", 1, 1, "1000.000", "100.000"),
      X("VEC", 100, 1, "1010.000", "5.000"), X("MTE2", 100, 1, "1000.000", "12.000"),
      X("MTE2", 100, 1, "1001.000", "1.000")};
  TimelineEvidence t = Summarize(Write(Trace(events)));
  EXPECT_EQ(t.overlap_ns, 2000);  // [1010,1012)
  EXPECT_EQ(t.late_events, 0);
  TimelineOptions o;
  o.reorder_window = 0;  // every event processed as it arrives
  t = Summarize(Write(Trace(events), "b.json"), o);
  EXPECT_EQ(t.late_events, 2);
  EXPECT_EQ(t.limitations.size(), 5u);
}

TEST_F(TimelineTest, WindowClipsAndOtherLanesAreIgnored) {
  const fs::path p = Write(Trace(
      {Lane(100, 1, "Group0-aiv0"), Lane(7, 7, "CANN"), X("Add_1", 1, 1, "1000.000", "10.000"),
       X("MTE2", 100, 1, "995.000", "10.000"), X("VEC", 100, 1, "999.000", "3.000"),
       X("MTE2", 7, 7, "1000.000", "10.000"), X("VEC", 100, 1, "1020.000", "3.000")}));
  const TimelineEvidence t = Summarize(p);
  EXPECT_EQ(t.overlap_ns, 2000);  // VEC clipped to [1000,1002)
  EXPECT_EQ(t.events_in_window, 2);
  EXPECT_EQ(t.events_outside_window, 1);
  EXPECT_EQ(t.instruction_event_counts.at("MTE2"), 1);  // the CANN lane's is not counted
}

TEST_F(TimelineTest, ObjectFormTinyBufferAndUnterminatedArrayAgree) {
  const std::vector<std::string> events = {
      Lane(100, 1, "Group0-aiv0"), X("Add_1", 1, 1, "1000.000", "10.000"),
      X("MTE2", 100, 1, "1000.000", "4.000"), X("VEC", 100, 1, "1002.000", "4.000")};
  std::string body;
  for (size_t i = 0; i < events.size(); ++i) body += (i ? "," : "") + events[i];
  TimelineOptions tiny;
  tiny.buffer_bytes = 16;
  const TimelineEvidence a =
      Summarize(Write(R"({"displayTimeUnit":"ns","traceEvents":[)" + body + R"(],"x":{"y":[1,2]}})",
                      "a.json"),
                tiny);
  const TimelineEvidence b = Summarize(Write("[" + body + ",", "b.json"));
  EXPECT_EQ(a.overlap_ns, 2000);
  EXPECT_EQ(b.overlap_ns, 2000);
  EXPECT_EQ(b.limitations.back(),
            "the trace's event array has no closing ']' (read to end of file)");
}

TEST_F(TimelineTest, StringEscapesAreDecoded) {
  const fs::path p =
      Write(R"([{"name":"A\"d\u0064\ud83d\ude00","ph":"X","pid":1,"tid":1,"ts":"1","dur":"1"}])");
  TimelineOptions o;
  o.op_name = "A\"dd\xF0\x9F\x98\x80";
  EXPECT_EQ(Summarize(p, o).attribution_status, "unique_exact_target_window");
}

TEST_F(TimelineTest, MalformedInputsAreClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[{\"name\":\"x\",}]", "at byte 13"},  {"{\"a\":1}", "no traceEvents"},
      {"[{\"a\":tru}]", "invalid value"},     {"[1] x", "data after the trace"},
      {"[{\"a\":\"b", "unterminated string"}, {"{\"traceEvents\":[{}", "expected ',' or ']'"},
  };
  for (const auto& [text, want] : cases) {
    absl::StatusOr<TimelineEvidence> t = SummarizeTimeline(Write(text, "bad.json"), {"Add_1"});
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << text;
    EXPECT_NE(std::string(t.status().message()).find(want), std::string::npos) << t.status();
  }
  std::string deep(300, '[');
  EXPECT_FALSE(SummarizeTimeline(Write("[" + deep, "deep.json"), {"Add_1"}).ok());
  const fs::path sub_ns =
      Write(Trace({Lane(100, 1, "Group0-aiv0"), X("Add_1", 1, 1, "1000.000", "10.000"),
                   X("MTE2", 100, 1, "1000.0001", "4.000")}),
            "subns.json");
  absl::StatusOr<TimelineEvidence> t = SummarizeTimeline(sub_ns, {"Add_1"});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("event #2 (MTE2) ts"), std::string::npos)
      << t.status();
  EXPECT_TRUE(absl::IsNotFound(SummarizeTimeline(dir_ / "none.json", {"Add_1"}).status()));
}

TEST_F(TimelineTest, FindsTheTraceInAProfDirectory) {
  const fs::path out = dir_ / "PROF_000001_x" / "mindstudio_profiler_output";
  fs::create_directories(out);
  std::ofstream(out / "msprof_20260101000000.json") << "[]";
  std::ofstream(out / "msprof_20260101000005.json") << "[]";
  std::ofstream(out / "op_summary_20260101000005.csv") << "";
  EXPECT_EQ(*FindTimelineTrace(dir_), out / "msprof_20260101000005.json");
  EXPECT_EQ(*FindTimelineTrace(dir_ / "PROF_000001_x"), out / "msprof_20260101000005.json");
  fs::create_directories(dir_ / "PROF_000002_y" / "mindstudio_profiler_output");
  std::ofstream(dir_ / "PROF_000002_y" / "mindstudio_profiler_output" /
                "msprof_20260101000009.json")
      << "[]";
  EXPECT_TRUE(absl::IsFailedPrecondition(FindTimelineTrace(dir_).status()));
  EXPECT_TRUE(absl::IsNotFound(FindTimelineTrace(dir_ / "nothing").status()));
}

TEST_F(TimelineTest, TheCapturesDeviceFilesAreRequiredAsTheReferenceSays) {
  auto refused = [](const absl::StatusOr<TimelineDeviceFiles>& f, const std::string& why) {
    EXPECT_TRUE(absl::IsFailedPrecondition(f.status())) << f.status();
    EXPECT_NE(f.status().message().find(why), std::string::npos) << f.status();
  };
  refused(FindTimelineDeviceFiles(dir_, 0), "holds 0 PROF_* directories");
  const fs::path prof = dir_ / "PROF_000001_20260101000000_ABC";
  fs::create_directories(prof / "device_1" / "sqlite");
  refused(FindTimelineDeviceFiles(dir_, 0), "is not the job's device 0");
  refused(FindTimelineDeviceFiles(prof, 1), "no regular");  // no biu_perf.db
  fs::create_directories(prof / "device_2");
  refused(FindTimelineDeviceFiles(prof, 1), "holds 2 device_* directories");
  fs::remove_all(prof / "device_2");
  // A symlinked db is not the capture's own file.
  fs::create_symlink("/etc/hostname", prof / "device_1" / "sqlite" / "biu_perf.db");
  refused(FindTimelineDeviceFiles(prof, 1), "no regular");
  fs::remove(prof / "device_1" / "sqlite" / "biu_perf.db");
  std::ofstream(prof / "device_1" / "sqlite" / "biu_perf.db") << "not sqlite at all";
  refused(FindTimelineDeviceFiles(prof, 1), "SQLite");
}

}  // namespace
}  // namespace npuperf::evidence
