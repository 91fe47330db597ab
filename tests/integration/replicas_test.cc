// Two npuperf-server replicas on one PostgreSQL database (the issue's
// "several replicas must never hand one job, or one device, to two agents"),
// through the real binaries. Runs when NPUPERF_TEST_PG_URL is set
// (deploy/with-postgres.sh, as `make test` does), in a schema of its own.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/fakes/pg_schema.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using server::PgTestSchema;
using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

// Four agents, two on each replica (distinct devices of one host: one lock
// dir, one simulator state), and 200 quick jobs submitted half through each
// replica: every job runs exactly once (attempt 1, one round), msprof-sim
// never sees a device used twice at a time, and agents of both replicas
// work, woken by the other replica's submissions too.
TEST(ReplicasTest, TwoReplicasOnOnePostgresHandOutNoJobTwice) {
  if (PgTestSchema::BaseUrl().empty()) GTEST_SKIP() << "NPUPERF_TEST_PG_URL is not set";
  PgTestSchema schema("it");
  Cluster c;
  c.db = schema.url();
  c.Start("");
  std::string replica;
  auto server_b = c.StartReplica("server-b", &replica);
  ASSERT_NE(server_b, nullptr);
  const std::string servers[2] = {c.address, replica};
  std::vector<std::unique_ptr<Process>> agents;
  const char* devices[4] = {"0-1", "2-3", "4-5", "6-7"};
  for (int i = 0; i < 4; ++i) {
    agents.push_back(c.StartAgent(devices[i], absl::StrCat("agent", i), {}, servers[i / 2]));
    ASSERT_NE(agents.back(), nullptr);
  }
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    auto r = c.Cli({"--format",
                    "json",
                    "submit",
                    (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(),
                    "--op-name",
                    kKernel,
                    "--no-wait",
                    "--quick",
                    "--warm-up",
                    "0",
                    "--repeats",
                    "1",
                    "--case-arg=--case-id",
                    "--case-id",
                    "p0",
                    "--case-id",
                    "p1",
                    "--case-id",
                    "p2",
                    "--case-id",
                    "s1"},
                   servers[i % 2]);
    v1::Collection col;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
    ids.push_back(col.id());
  }
  std::set<int64_t> jobs;
  std::map<std::string, int> by_agent;
  int rounds = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto col = c.WaitFor(ids[i], Terminal, seconds(600));
    ASSERT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED) << col.DebugString();
    for (const auto& j : col.jobs()) {
      EXPECT_TRUE(jobs.insert(j.id()).second) << "job " << j.id() << " listed twice";
      EXPECT_EQ(j.attempt(), 1) << "job " << j.id() << " was leased more than once";
      ++by_agent[j.placement().agent_id()];
    }
    // Rounds through the other replica: both read the same store.
    auto r = c.Cli({"rounds", "--collection", ids[i]}, servers[(i + 1) % 2]);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    rounds += static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n')) - 1;  // header
  }
  EXPECT_EQ(jobs.size(), 200u);
  EXPECT_EQ(rounds, 200) << "every job stored exactly one round";
  EXPECT_EQ(by_agent.size(), 4u) << "every agent, on both replicas, should have worked";
  EXPECT_FALSE(std::filesystem::exists(c.dir.path() / "conflicts.log"))
      << "msprof-sim saw a double-booked device";
}

}  // namespace
}  // namespace npuperf::testing
