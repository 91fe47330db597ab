#include "sim/simulator.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::sim {
namespace {

using std::chrono::seconds;

// The hang fault waits on the injected Clock: the run stays blocked until the
// FakeClock reaches the fault's length, then exports as usual.
TEST(SimulatorTest, HangFaultWaitsOnTheInjectedClock) {
  testing::TempDir dir;
  SimOptions options;
  options.output = (dir.path() / "out").string();
  options.app = {"true"};
  SimEnv env;
  env.soc = "Ascend910B2";
  env.seed = 7;
  env.state_dir = dir.path() / "state";
  env.fault_spec = "hang:5";
  testing::FakeClock clock;
  Simulator sim(options, env, clock, dir.path());
  std::atomic<int> code{-1};
  std::thread run([&] { code = sim.Run(); });

  clock.AwaitWaiters(1);
  clock.Advance(seconds(4));
  EXPECT_EQ(clock.waiters(), 1u);  // 4 s of 5: still hanging
  EXPECT_EQ(code.load(), -1);
  clock.Advance(seconds(1));
  run.join();
  EXPECT_EQ(code.load(), 0);
  EXPECT_EQ(clock.waiters(), 0u);
}

}  // namespace
}  // namespace npuperf::sim
