#include "sim/launch.h"

#include <fstream>

#include "gtest/gtest.h"

namespace npuperf::sim {
namespace {

TEST(LaunchTest, ParsesEveryField) {
  auto l = ParseLaunchLine(
      "launch op=k1 type=Add task=MIX_AIV blocks=8 mix=4 state=static hf32=YES count=3 t=42 "
      "in_shapes=1,32;1,32 in_dtypes=DT_FLOAT16;DT_FLOAT16 in_formats=ND;ND out_shapes=1,32 "
      "out_dtypes=DT_FLOAT16 out_formats=ND gm_to_ub=1024 ub_to_gm=512 gm_to_l1=1 l0c_to_gm=2 "
      "cube_fp16=3 cube_int8=4 vec_fp32=5 vec_fp16=6 vec_int32=7 vec_misc=8 scalar=9 l2_hit=0.5 "
      "bank_conflict=0.25 skew=0.1 icache_miss=0.02 overlap=0.6");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->op_name, "k1");
  EXPECT_EQ(l->op_type, "Add");
  EXPECT_EQ(l->task_type, TaskType::kMixAiv);
  EXPECT_EQ(l->block_num, 8);
  EXPECT_EQ(l->mix_block_num, 4);
  EXPECT_EQ(l->count, 3);
  EXPECT_EQ(l->host_ns, 42);
  EXPECT_EQ(l->in_shapes, "1,32;1,32");
  EXPECT_DOUBLE_EQ(l->work.gm_to_ub, 1024);
  EXPECT_DOUBLE_EQ(l->work.vec_misc, 8);
  EXPECT_DOUBLE_EQ(l->work.overlap, 0.6);
}

TEST(LaunchTest, DefaultsOpTypeToOpName) {
  auto l = ParseLaunchLine("launch op=_Z3foov");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->op_type, "_Z3foov");
  EXPECT_EQ(l->task_type, TaskType::kAiVectorCore);
}

TEST(LaunchTest, PyptoKernelHasTwoNames) {
  auto l = ParseLaunchLine("launch op=mul_kernel_2d task=MIX_AIC blocks=24 mix=48 pypto=3");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->pypto, 3);
  EXPECT_EQ(SummaryName(*l), "PYPTO_mul_kernel_2d");
  EXPECT_EQ(KernelName(*l), "tilefwk_3_mix_aic");
  EXPECT_EQ(l->op_type, "PYPTO_mul_kernel_2d");
  auto plain = ParseLaunchLine("launch op=k");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pypto, -1);
  EXPECT_EQ(SummaryName(*plain), "k");
  EXPECT_EQ(KernelName(*plain), "k");
  for (const char* bad : {"launch op=x pypto=0", "launch op=x task=MIX_AIV mix=2 pypto=0",
                          "launch op=x task=MIX_AIC mix=2 pypto=-1"}) {
    EXPECT_FALSE(ParseLaunchLine(bad).ok()) << bad;
  }
}

TEST(LaunchTest, RejectsBadLines) {
  for (const char* bad :
       {"lunch op=x", "launch", "launch op=x blocks=0", "launch op=x bogus=1",
        "launch op=x gm_to_ub=-1", "launch op=x task=GPU", "launch op=x task=MIX_AIC",
        "launch op=x l2_hit=1.5", "launch op=x noequals"}) {
    EXPECT_FALSE(ParseLaunchLine(bad).ok()) << bad;
  }
  EXPECT_TRUE(absl::IsNotFound(ParseLaunchLine("  # comment").status()));
  EXPECT_TRUE(absl::IsNotFound(ParseLaunchLine("").status()));
}

TEST(LaunchTest, ReadsFileAndNamesBadLine) {
  std::string path = ::testing::TempDir() + "/launch_test.txt";
  {
    std::ofstream out(path);
    out << "launch op=a\n\n# x\nlaunch op=b count=2\n";
  }
  auto all = ReadLaunchFile(path);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].count, 2);
  {
    std::ofstream out(path, std::ios::app);
    out << "launch op=c blocks=x\n";
  }
  auto bad = ReadLaunchFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":5:"), std::string::npos) << bad.status();
  auto missing = ReadLaunchFile(path + ".missing");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

}  // namespace
}  // namespace npuperf::sim
