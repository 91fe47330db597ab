// client/discover_commands.cc: the candidate table as discover prints it.
#include "client/discover_commands.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tests/client/mock_session.h"

namespace npuperf::client {
namespace {

using ::npuperf::testing::Proto;

TEST(PrintDiscoveryTest, OneRowPerCandidateTheNameLastAndTheIncidentalReasonsOfThisClient) {
  const v1::Job job = Proto<v1::Job>(R"pb(
    operator_name: "add"
    case_id: "p1"
    state: JOB_STATE_SUCCEEDED
    discovery {
      source: "discovery/PROF_1/task_time_1.csv (task_time)"
      candidates {
        op_name: "add_kernel"
        task_type: "AI_VECTOR_CORE"
        count: 10
        total_duration_us: 123.4567
        launches { index: 1 stream_id: 2 task_id: 5 start_us: -1 duration_us: 12 }
        launches { index: 2 stream_id: -1 task_id: 6 start_us: -1 duration_us: 12 }
      }
      candidates {
        op_name: "Cast"
        count: 1
        total_duration_us: 1
        incidental: "(the agent's word is not used)"
      }
    })pb");
  std::ostringstream out;
  PrintDiscovery(job, out);
  EXPECT_EQ(out.str(),
            "add case p1: 2 candidates from discovery/PROF_1/task_time_1.csv (task_time)\n"
            "count\ttask_type\ttotal_duration_us\tlaunches\tincidental\texact_op_name\n"
            "10\tAI_VECTOR_CORE\t123.457\t#1:2/5,#2:N/A/6,+8 more\t-\tadd_kernel\n"
            "1\t-\t1.000\t+1 more\tincidental kernel Cast\tCast\n");
}

TEST(PrintDiscoveryTest, AFailedJobPrintsItsReason) {
  const v1::Job job = Proto<v1::Job>(R"pb(
    operator_name: "add"
    state: JOB_STATE_FAILED
    reason: "attempt 1 failed: no runner")pb");
  std::ostringstream out;
  PrintDiscovery(job, out);
  EXPECT_EQ(out.str(), "add: failed: attempt 1 failed: no runner\n");
}

}  // namespace
}  // namespace npuperf::client
