#include "sim/options.h"

#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

using Args = std::vector<std::string>;

TEST(OptionsTest, ParsesPyptoStandardRun) {
  auto o = ParseOptions({"--output=/x/PROF_Memory", "--ai-core=on", "--aic-metrics=Memory",
                         "--task-time=on", "--ascendcl=on", "python3", "t.py", "--case-id", "p0"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->output, "/x/PROF_Memory");
  EXPECT_EQ(o->group, MetricGroup::kMemory);
  EXPECT_EQ(o->app, (Args{"python3", "t.py", "--case-id", "p0"}));
  EXPECT_TRUE(o->ai_core);
}

TEST(OptionsTest, SampleRunAndDoubleDash) {
  auto o = ParseOptions({"--aic-mode=sample-based", "--aic-freq=50", "--", "--weird-app"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->mode, AicMode::kSampleBased);
  EXPECT_EQ(o->aic_freq_hz, 50);
  EXPECT_EQ(o->app, Args{"--weird-app"});
}

TEST(OptionsTest, ApplicationFlagIsSplitLikeAShell) {
  auto o = ParseOptions({"--application=python3 'my test.py' --case-id \"p 0\""});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->app, (Args{"python3", "my test.py", "--case-id", "p 0"}));
}

TEST(OptionsTest, TaskTimeLevelsDriveAiCoreDefault) {
  auto l0 = ParseOptions({"--task-time=l0", "app"});
  ASSERT_TRUE(l0.ok());
  EXPECT_EQ(l0->task_time, TaskTimeLevel::kL0);
  EXPECT_FALSE(l0->ai_core);
  auto forced = ParseOptions({"--ai-core=on", "--task-time=off", "app"});
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->ai_core);
  EXPECT_EQ(forced->task_time, TaskTimeLevel::kOff);
}

TEST(OptionsTest, ErrorsAreMessagesNotCrashes) {
  struct Case {
    Args args;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {{"--l2=on", "app"}, "not supported by msprof-sim"},
           {{"--instr-profiling=maybe", "app"}, "must be on or off"},
           {{"--export=on", "--output=x", "app"}, "takes no application"},
           {{"--export=on"}, "needs --output"},
           {{"--export=on", "--output=x", "--type=db"}, "only text"},
           {{"--reports=r.json", "app"}, "needs --export=on"},
           {{"--aic-metrics=Custom:0x8", "app"}, "not supported by msprof-sim"},
           {{"--aic-metrics=Bogus", "app"}, "invalid --aic-metrics"},
           {{"--aic-freq=0", "app"}, "1..100"},
           {{"--aic-freq=101", "app"}, "1..100"},
           {{"--task-time=maybe", "app"}, "--task-time"},
           {{"--frobnicate=1", "app"}, "unknown option"},
           {{"--output", "app"}, "needs a value"},
           {{"--output=x"}, "no application"},
           {{"--ai-core=off", "--aic-mode=sample-based", "app"}, "needs --ai-core=on"},
           {{"--application=a", "b"}, "not both"},
           {{"--application='unterminated"}, "quote"},
           {{"--type=json", "app"}, "--type must be text or db"},
       }) {
    auto o = ParseOptions(c.args);
    ASSERT_FALSE(o.ok()) << c.args[0];
    EXPECT_NE(o.status().message().find(c.want), std::string::npos) << o.status();
  }
}

TEST(OptionsTest, InstrProfilingAndExport) {
  auto o = ParseOptions({"--ai-core=on", "--aic-metrics=PipeUtilization", "--instr-profiling=on",
                         "--task-time=on", "app"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->instr_profiling);
  auto e = ParseOptions({"--export=on", "--output=PROF_1", "--type=text", "--reports=r.json"});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->export_only);
  EXPECT_EQ(e->reports, "r.json");
  EXPECT_TRUE(e->app.empty());
}

TEST(OptionsTest, TypeDbExportsTheUnifiedDbOnly) {
  auto o = ParseOptions({"--type=db", "app"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->db_only);
  o = ParseOptions({"--type=text", "app"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->db_only);
  EXPECT_FALSE(ParseOptions({"app"})->db_only);
}

TEST(OptionsTest, MsprofOpSubcommand) {
  auto o = ParseOptions({"op", "--output=/o", "--aic-metrics=PipeUtilization,Memory",
                         "--kernel-name=add_custom", "--launch-count=1", "./app", "x"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->op_mode);
  EXPECT_EQ(o->output, "/o");
  EXPECT_EQ(o->kernel_name, "add_custom");
  EXPECT_EQ(o->op_groups,
            (std::vector<MetricGroup>{MetricGroup::kPipeUtilization, MetricGroup::kMemory}));
  EXPECT_EQ(o->app, (Args{"./app", "x"}));
  auto all = ParseOptions({"op", "./app"});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->op_groups.size(), 7u);  // msprof op collects every group by default
  EXPECT_TRUE(all->kernel_name.empty());
  EXPECT_FALSE(ParseOptions({"./app"})->op_mode);
  struct Case {
    Args args;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {{"op", "--launch-count=2", "app"}, "--launch-count=2 is not supported"},
           {{"op", "--task-time=on", "app"}, "--task-time is not supported by msprof-sim op"},
           {{"op", "--aic-metrics=MemoryAccess", "app"}, "not a msprof op metric"},
           {{"op", "--aic-metrics=PipeUtilization,Bogus", "app"}, "invalid --aic-metrics"},
           {{"op", "--kernel-name=", "app"}, "--kernel-name is empty"},
           {{"op", "--output=x"}, "no application"},
       }) {
    auto bad = ParseOptions(c.args);
    ASSERT_FALSE(bad.ok()) << c.args[1];
    EXPECT_NE(bad.status().message().find(c.want), std::string::npos) << bad.status();
  }
}

TEST(OptionsTest, HelpVersionAndIgnoredFlags) {
  EXPECT_TRUE(ParseOptions({"--help"})->help);
  EXPECT_TRUE(ParseOptions({"--version"})->version);
  EXPECT_TRUE(ParseOptions({"--runtime-api=on", "--l2=off", "app"}).ok());
  EXPECT_NE(UsageText().find("--aic-metrics"), std::string::npos);
}

}  // namespace
}  // namespace npuperf::sim
