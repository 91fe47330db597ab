#pragma once

#include <array>
#include <string>
#include <vector>

namespace npuperf::agent {

// The seven --aic-metrics groups, in the fixed order the protocol runs them.
inline constexpr std::array<const char*, 7> kMetricGroups = {
    "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
    "L2Cache",         "ResourceConflictRatio"};

// The optional eighth group, run after the seven where the SoC has it
// (evidence::HasMemoryAccessGroup): the bytes moved that the measured
// roofline needs. A failed MemoryAccess run is a warning, like the sample run.
inline constexpr char kMemoryAccessGroup[] = "MemoryAccess";

// msprof argv per mode, exactly as the reference scripts issue them
// (reference-scripts.md §6.1), followed by the application argv.
std::vector<std::string> QuickArgv(const std::string& msprof, const std::string& output,
                                   const std::vector<std::string>& app);
std::vector<std::string> MetricArgv(const std::string& msprof, const std::string& output,
                                    const std::string& metric, const std::vector<std::string>& app);
std::vector<std::string> SampleArgv(const std::string& msprof, const std::string& output,
                                    const std::vector<std::string>& app);
// The supplemental instruction profile (reference-scripts.md §5.7), then its
// export with the BIU timeline section (`reports` names a file holding
// kTimelineReports).
std::vector<std::string> TimelineArgv(const std::string& msprof, const std::string& output,
                                      const std::vector<std::string>& app);
std::vector<std::string> TimelineExportArgv(const std::string& msprof, const std::string& prof_dir,
                                            const std::string& reports);
inline constexpr char kTimelineReports[] = R"({"json_process":{"ascend":true,"biu_perf":true}})";

}  // namespace npuperf::agent
