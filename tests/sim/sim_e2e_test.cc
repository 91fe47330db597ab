// Runs the built msprof-sim binary (build/sim-bin/msprof) end to end.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

// msprof-sim runs as a real process: its tests wait in real time.
npuperf::RealClock& Wall() {
  static npuperf::RealClock clock;
  return clock;
}

struct Result {
  int code = -1;
  std::string out;
};

class SimE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* build = std::getenv("NPUPERF_BUILD_DIR");
    msprof_ = fs::path(build ? build : "build") / "sim-bin" / "msprof";
    ASSERT_TRUE(fs::exists(msprof_)) << msprof_;
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("sim_e2e_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    env_ = absl::StrCat("MSPROF_SIM_STATE_DIR=", (dir_ / "state").string(), " MSPROF_SIM_SEED=7 ");
  }

  // Runs `env_ + extra_env msprof args` through the shell; captures stdout+stderr.
  Result Run(const std::string& extra_env, const std::string& args) {
    std::string cmd = absl::StrCat("cd ", dir_.string(),
                                   " && env -u ASCEND_RT_VISIBLE_DEVICES -u TILE_FWK_DEVICE_ID ",
                                   env_, extra_env, " ", msprof_.string(), " ", args, " 2>&1");
    Result r;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
    int status = ::pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
  }

  fs::path OnlyProfDir(const fs::path& out) {
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(out)) found.push_back(e.path());
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? fs::path() : found[0];
  }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static fs::path Csv(const fs::path& prof, const std::string& name) {
    for (const auto& e : fs::directory_iterator(prof / "mindstudio_profiler_output")) {
      if (e.path().filename().string().rfind(name + "_", 0) == 0) return e.path();
    }
    return {};
  }

  static constexpr const char* kApp =
      "sh -c 'echo hello-from-app; echo \"launch op=StatelessNormal blocks=48 gm_to_ub=4194304 "
      "vec_fp32=1e7\" "
      ">> \"$MSPROF_SIM_LAUNCH_FILE\"; echo \"launch op=_Z6targetv blocks=16 gm_to_ub=1e6 "
      "vec_fp16=1e6 count=2\" "
      ">> \"$MSPROF_SIM_LAUNCH_FILE\"'";

  fs::path msprof_, dir_;
  std::string env_;
};

TEST_F(SimE2eTest, QuickModeWritesTheRealTree) {
  Result r = Run("", absl::StrCat("--output=out --task-time=on --ascendcl=on ", kApp));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("hello-from-app"), std::string::npos);
  fs::path prof = OnlyProfDir(dir_ / "out");
  EXPECT_TRUE(
      std::regex_match(prof.filename().string(), std::regex("PROF_000001_\\d{17}_[0-9A-Z]{16}")))
      << prof.filename();
  EXPECT_TRUE(fs::is_directory(prof / "device_0" / "sqlite"));
  EXPECT_TRUE(fs::is_directory(prof / "mindstudio_profiler_log"));
  std::string tt = Read(Csv(prof, "task_time"));
  EXPECT_NE(tt.find("0,_Z6targetv,AI_VECTOR_CORE,"), std::string::npos) << tt;
  EXPECT_TRUE(std::regex_match(Csv(prof, "api_statistic").filename().string(),
                               std::regex("api_statistic_\\d{14}\\.csv")));
  EXPECT_TRUE(fs::exists(Csv(prof, "op_summary")));
  EXPECT_TRUE(fs::exists(Csv(prof, "op_statistic")));
}

TEST_F(SimE2eTest, ApplicationExitStatusIsPropagated) {
  Result r = Run("", "--output=out sh -c 'exit 7'");
  EXPECT_EQ(r.code, 7) << r.out;
  EXPECT_EQ(Run("", "--output=out /nonexistent/app").code, 127);
}

TEST_F(SimE2eTest, BadUsageFailsWithAMessage) {
  Result r = Run("", "--l2=on --output=out true");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("not supported by msprof-sim"), std::string::npos);
  EXPECT_EQ(Run("", "--aic-metrics=MemoryAccess true").code, 0);
  r = Run("MSPROF_SIM_SOC_MAP=0-7=Ascend950PR_9589", "--aic-metrics=MemoryAccess true");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("not supported on Ascend950PR_9589"), std::string::npos);
  EXPECT_EQ(Run("", "").code, 2);
  Result v = Run("", "--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("msprof-sim"), std::string::npos);
  EXPECT_EQ(Run("", "--help").code, 0);
}

TEST_F(SimE2eTest, VisibilityAndSocMapChooseDeviceAndColumns) {
  Result r =
      Run("ASCEND_RT_VISIBLE_DEVICES=4,5 TILE_FWK_DEVICE_ID=1 "
          "MSPROF_SIM_SOC_MAP=0-3=Ascend910B2,4-7=Ascend950PR_9589",
          absl::StrCat("--output=out --ai-core=on --aic-metrics=PipeUtilization --task-time=on ",
                       kApp));
  ASSERT_EQ(r.code, 0) << r.out;
  fs::path prof = OnlyProfDir(dir_ / "out");
  EXPECT_TRUE(fs::is_directory(prof / "device_5"));
  std::string summary = Read(Csv(prof, "op_summary"));
  EXPECT_NE(summary.find("aic_mte3_ratio"), std::string::npos);  // A5 column set
  EXPECT_EQ(summary.find("\n0,"), std::string::npos);
  EXPECT_NE(summary.find("\n5,4294967295,"), std::string::npos);
}

TEST_F(SimE2eTest, ConflictDetectorRefusesDoubleBooking) {
  std::string log = (dir_ / "conflicts.log").string();
  std::string hold = "sh -c 'touch ready; while [ ! -e go ]; do sleep 0.02; done'";
  std::thread first([&] { EXPECT_EQ(Run("TILE_FWK_DEVICE_ID=2", "--output=a " + hold).code, 0); });
  for (int i = 0; i < 500 && !fs::exists(dir_ / "ready"); ++i)
    Wall().SleepFor(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(dir_ / "ready"));
  Result busy = Run(absl::StrCat("ASCEND_RT_VISIBLE_DEVICES=2 MSPROF_SIM_CONFLICT_LOG=", log),
                    "--output=b true");
  Result other =
      Run(absl::StrCat("TILE_FWK_DEVICE_ID=3 MSPROF_SIM_CONFLICT_LOG=", log), "--output=c true");
  std::ofstream(dir_ / "go").put('x');
  first.join();
  EXPECT_EQ(busy.code, 16) << busy.out;
  EXPECT_NE(busy.out.find("device 2 is already being profiled"), std::string::npos) << busy.out;
  EXPECT_EQ(other.code, 0) << other.out;
  std::string lines = Read(log);
  EXPECT_NE(lines.find("conflict device=2"), std::string::npos) << lines;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1);
  EXPECT_EQ(Run("TILE_FWK_DEVICE_ID=2", "--output=d true").code, 0);  // released
}

TEST_F(SimE2eTest, InjectedFailuresCrashesAndHangs) {
  Result fail = Run("MSPROF_SIM_FAULT='fail:Memory:9'", "--output=o --aic-metrics=Memory true");
  EXPECT_EQ(fail.code, 9);
  EXPECT_NE(fail.out.find("injected fault"), std::string::npos);
  EXPECT_EQ(Run("MSPROF_SIM_FAULT='fail:Memory:9'", "--output=o --aic-metrics=L2Cache true").code,
            0);
  EXPECT_EQ(Run("MSPROF_SIM_FAULT=crash", "--output=o true").code, 134);
  EXPECT_EQ(Run("MSPROF_SIM_FAULT='crash@dev=1'", "--output=o true").code, 0);
  EXPECT_EQ(Run("MSPROF_SIM_FAULT='fail:*:3@first=1'", "--output=o true").code, 3);
  EXPECT_EQ(Run("MSPROF_SIM_FAULT='fail:*:3@first=1'", "--output=o true").code, 0);
  auto t0 = Wall().MonotonicNow();
  EXPECT_EQ(Run("MSPROF_SIM_FAULT=hang:0.3", "--output=o true").code, 0);
  EXPECT_GE(Wall().MonotonicNow() - t0, std::chrono::milliseconds(300));
  EXPECT_EQ(Run("MSPROF_SIM_FAULT=nonsense", "--output=o true").code, 2);
}

TEST_F(SimE2eTest, HundredThousandKernelsGiveHundredThousandRows) {
  std::string app =
      "sh -c 'echo \"launch op=_Z1kv blocks=48 gm_to_ub=4194304 ub_to_gm=2097152 vec_fp16=2097152 "
      "count=100000\" "
      ">> \"$MSPROF_SIM_LAUNCH_FILE\"'";
  Result r = Run("", "--output=out --ai-core=on --aic-metrics=L2Cache --task-time=on " + app);
  ASSERT_EQ(r.code, 0) << r.out;
  fs::path prof = OnlyProfDir(dir_ / "out");
  for (const char* name : {"op_summary", "task_time"}) {
    std::ifstream in(Csv(prof, name));
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) ++lines;
    EXPECT_EQ(lines, 1 + 100000 + (std::string(name) == "task_time" ? 2 : 0)) << name;
  }
}

TEST_F(SimE2eTest, HangIsKillableWithSigterm) {
  auto t0 = Wall().MonotonicNow();
  Result r = Run("MSPROF_SIM_FAULT=hang:30",
                 "--output=o sh -c 'true' & sleep 0.5; kill -TERM $!; wait $!");
  EXPECT_EQ(r.code, 143) << r.out;
  EXPECT_LT(Wall().MonotonicNow() - t0, std::chrono::seconds(10));
}

TEST_F(SimE2eTest, PythonHelperReportsLaunchesAndIsANoOpOutside) {
  std::string py =
      "python3 -c 'import msprof_sim as m; assert m.active(); "
      "m.launch(\"_Z4gemmv\", \"MIX_AIC\", 24, 48, inputs=[((64, 64), \"DT_FLOAT16\", \"ND\")], "
      "cube_fp16=1e9, gm_to_l1=1e6, vec_fp32=1e6, l0c_to_gm=1e5)'";
  Result r = Run("", "--output=out --task-time=on " + py);
  ASSERT_EQ(r.code, 0) << r.out;
  std::string summary = Read(Csv(OnlyProfDir(dir_ / "out"), "op_summary"));
  EXPECT_NE(summary.find("_Z4gemmv,_Z4gemmv,dynamic,MIX_AIC,"), std::string::npos) << summary;
  EXPECT_NE(summary.find(",24,48,NO,\"64,64\",DT_FLOAT16,ND,N/A,N/A,N/A,0,"), std::string::npos)
      << summary;
  Result a5 =
      Run("MSPROF_SIM_SOC_MAP=0-7=Ascend950PR_9589",
          "--output=a5 python3 -c 'import msprof_sim as m; "
          "assert (m.soc(), m.cube_cores(), m.vector_cores()) == (\"Ascend950PR_9589\", 32, 64)'");
  EXPECT_EQ(a5.code, 0) << a5.out;
  const char* src = std::getenv("NPUPERF_SOURCE_DIR");
  std::string path = absl::StrCat(src ? src : ".", "/sim/python");
  std::string outside =
      absl::StrCat("cd ", dir_.string(), " && env -u MSPROF_SIM_LAUNCH_FILE PYTHONPATH=", path,
                   " python3 -c 'import msprof_sim as m; assert not m.active(); "
                   "assert m.launch(\"k\") is False'");
  EXPECT_EQ(std::system(outside.c_str()), 0);
}

}  // namespace
