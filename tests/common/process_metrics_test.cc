// The process collector: /proc parsing on fixed text, and a live Collect()
// of this test process.
#include "common/process_metrics.h"

#include <set>

#include "gtest/gtest.h"

namespace npuperf {
namespace {

TEST(ProcessMetricsTest, ParsesStatAfterTheLastParenthesis) {
  // pid (comm) state ppid ... utime=14 stime=15 ... starttime=22 vsize=23 rss=24
  const std::string stat =
      "4242 (npu perf) (x)) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 150 0 0 20 0 9 0 12345 "
      "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 4096 17000 0 0 0 17 1 0 0 0 0 0\n";
  ProcStat st;
  ASSERT_TRUE(ParseProcStat(stat, 100, &st));
  EXPECT_DOUBLE_EQ(st.cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(st.start_seconds_since_boot, 123.45);
  EXPECT_DOUBLE_EQ(st.vsize_bytes, 104857600);
  EXPECT_DOUBLE_EQ(st.rss_pages, 2560);
  EXPECT_FALSE(ParseProcStat("4242 (short) S 1 2", 100, &st));
  EXPECT_FALSE(ParseProcStat("no parenthesis", 100, &st));
  EXPECT_FALSE(ParseProcStat(stat, 0, &st));
}

TEST(ProcessMetricsTest, BootTime) {
  EXPECT_DOUBLE_EQ(ParseBootTime("cpu  1 2 3\nbtime 1764590000\nprocesses 9\n"), 1764590000);
  EXPECT_EQ(ParseBootTime("cpu 1 2 3\n"), -1);
}

TEST(ProcessMetricsTest, CollectsEveryFamilyOfThisProcess) {
  std::set<std::string> names;
  for (const auto& f : ProcessCollector().Collect()) {
    names.insert(f.name);
    ASSERT_EQ(f.metric.size(), 1u) << f.name;
    if (f.name == "process_open_fds") {
      EXPECT_GE(f.metric[0].gauge.value, 3);
    }
    if (f.name == "process_resident_memory_bytes") {
      EXPECT_GT(f.metric[0].gauge.value, 1 << 20);
    }
    if (f.name == "npuperf_build_info") {
      EXPECT_EQ(f.metric[0].label.size(), 2u);
      EXPECT_EQ(f.metric[0].gauge.value, 1);
    }
  }
  for (const char* want : {"npuperf_build_info", "process_cpu_seconds_total",
                           "process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_TRUE(names.contains(want)) << want;
  }
}

}  // namespace
}  // namespace npuperf
