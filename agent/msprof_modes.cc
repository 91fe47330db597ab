#include "agent/msprof_modes.h"

namespace npuperf::agent {
namespace {

std::vector<std::string> WithApp(std::vector<std::string> argv,
                                 const std::vector<std::string>& app) {
  argv.insert(argv.end(), app.begin(), app.end());
  return argv;
}

}  // namespace

std::vector<std::string> QuickArgv(const std::string& msprof, const std::string& output,
                                   const std::vector<std::string>& app) {
  return WithApp({msprof, "--output=" + output, "--task-time=on", "--ascendcl=on"}, app);
}

std::vector<std::string> MetricArgv(const std::string& msprof, const std::string& output,
                                    const std::string& metric,
                                    const std::vector<std::string>& app) {
  return WithApp({msprof, "--output=" + output, "--ai-core=on", "--aic-metrics=" + metric,
                  "--task-time=on", "--ascendcl=on"},
                 app);
}

std::vector<std::string> SampleArgv(const std::string& msprof, const std::string& output,
                                    const std::vector<std::string>& app) {
  return WithApp({msprof, "--output=" + output, "--ai-core=on", "--aic-metrics=PipeUtilization",
                  "--aic-mode=sample-based", "--aic-freq=100", "--task-time=on", "--ascendcl=on"},
                 app);
}

std::vector<std::string> TimelineArgv(const std::string& msprof, const std::string& output,
                                      const std::vector<std::string>& app) {
  return WithApp({msprof, "--output=" + output, "--ai-core=on", "--aic-metrics=PipeUtilization",
                  "--instr-profiling=on", "--task-time=on", "--ascendcl=on"},
                 app);
}

std::vector<std::string> TimelineExportArgv(const std::string& msprof, const std::string& prof_dir,
                                            const std::string& reports) {
  return {msprof, "--export=on", "--output=" + prof_dir, "--type=text", "--reports=" + reports};
}

}  // namespace npuperf::agent
