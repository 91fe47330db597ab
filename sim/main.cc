// msprof-sim: an msprof-compatible profiler simulator. See sim/README.md.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/export_only.h"
#include "sim/options.h"
#include "sim/sim_env.h"
#include "sim/simulator.h"

namespace {

// msprof_sim.py next to the binary's sim-bin/python, else the source tree.
std::filesystem::path FindPythonDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path dir = exe.parent_path();
    for (const auto& c : {dir / ".." / "sim-bin" / "python", dir / "python"}) {
      if (std::filesystem::exists(c / "msprof_sim.py")) return std::filesystem::weakly_canonical(c);
    }
  }
  return NPUPERF_SIM_PYTHON_SOURCE_DIR;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto options = npuperf::sim::ParseOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "[ERROR] msprof-sim: %s\n",
                 std::string(options.status().message()).c_str());
    return npuperf::sim::kExitUsage;
  }
  if (options->help) {
    std::printf("%s", npuperf::sim::UsageText().c_str());
    return 0;
  }
  if (options->version) {
    std::printf(
        "msprof-sim 0.1.0 (npuperf msprof simulator; msprof CLI/CSV compatible, CANN 8.5 "
        "layout)\n");
    return 0;
  }
  if (options->export_only) return npuperf::sim::RunExportOnly(*options);
  auto env = npuperf::sim::ReadSimEnv(npuperf::sim::ProcessEnv());
  if (!env.ok()) {
    std::fprintf(stderr, "[ERROR] msprof-sim: %s\n", std::string(env.status().message()).c_str());
    return npuperf::sim::kExitUsage;
  }
  if (!env->device_nodes.empty()) {
    // The device node, as the runtime opens it: unreachable (a sandbox that
    // hides it, no permission) means the device cannot be used.
    const std::string node = env->device_nodes + "/davinci" + std::to_string(env->physical_device);
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "[ERROR] msprof-sim: cannot open device node %s: %s\n", node.c_str(),
                   std::strerror(errno));
      return npuperf::sim::kExitCannotRun;
    }
    ::close(fd);
  }
  npuperf::RealClock clock;
  npuperf::sim::Simulator sim(*std::move(options), *std::move(env), clock, FindPythonDir());
  return sim.Run();
}
