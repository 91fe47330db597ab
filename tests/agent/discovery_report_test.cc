// The agent keeps a discovery report within the server's bounds
// (agent/discovery_report.h, common/input_rules.h).
#include "agent/discovery_report.h"

#include <string>

#include "common/input_rules.h"
#include "gtest/gtest.h"

namespace npuperf::agent {
namespace {

evidence::OpCandidate Candidate(const std::string& name, int launches) {
  evidence::OpCandidate c;
  c.op_name = name;
  c.task_type = "AI_CORE";
  c.count = launches;
  c.total_duration_us = 2.0 * launches;
  for (int i = 1; i <= launches; ++i) {
    evidence::LaunchInfo l;
    l.index = i;
    l.task_id = i;
    l.duration_us = 2;
    if (i == 2) l.start_ns = 1778059616768656843;  // exact: a double would round it
    c.launches.push_back(l);
  }
  return c;
}

TEST(DiscoveryReportTest, KeepsTheFirstCandidatesAndLaunchesAndCountsTheRest) {
  evidence::Discovery d;
  d.candidates.push_back(Candidate("target", 20));
  d.candidates.push_back(Candidate(std::string(kMaxDiscoveryOpNameBytes + 1, 'k'), 1));
  d.candidates.push_back(Candidate("tab\tname", 1));
  for (int i = 0; i < kMaxDiscoveryCandidates + 3; ++i) {
    d.candidates.push_back(Candidate("k" + std::to_string(i), 1));
  }
  d.candidates[0].op_type = "Add\x1b[2J";
  d.candidates[0].incidental = std::string(1000, 'i');
  d.source = "/jobs/1-1/session/discovery/PROF_1/task_time_1.csv (task_time)";
  for (int i = 0; i < kMaxDiscoveryNotes + 4; ++i) d.notes.push_back("note\n" + std::to_string(i));

  const v1::DiscoveryResult r = DiscoveryReport(d, "/jobs/1-1/session");
  ASSERT_EQ(r.candidates_size(), kMaxDiscoveryCandidates);
  // The long and the unprintable name are left out (never cut), and the 4 past the cap.
  EXPECT_EQ(r.candidates_left_off(), 2 + 4);
  const v1::DiscoveryCandidate& t = r.candidates(0);
  EXPECT_EQ(t.op_name(), "target");
  EXPECT_EQ(t.count(), 20);
  ASSERT_EQ(t.launches_size(), kMaxDiscoveryLaunches);
  EXPECT_EQ(t.launches(7).index(), 8);
  EXPECT_EQ(t.launches(0).task_id(), 1);
  EXPECT_EQ(t.launches(0).stream_id(), -1) << "none in the table";
  EXPECT_EQ(t.launches(0).start_us(), -1);
  EXPECT_EQ(t.launches(0).start_ns(), -1);
  EXPECT_EQ(t.launches(1).start_ns(), 1778059616768656843);
  EXPECT_EQ(t.op_type(), "Add?[2J");
  EXPECT_LE(t.incidental().size(), kMaxDiscoveryReasonBytes);
  EXPECT_EQ(r.candidates(1).op_name(), "k0");
  EXPECT_EQ(r.source(), "discovery/PROF_1/task_time_1.csv (task_time)");
  ASSERT_EQ(r.notes_size(), kMaxDiscoveryNotes);
  EXPECT_EQ(r.notes(0), "note 0");
}

}  // namespace
}  // namespace npuperf::agent
