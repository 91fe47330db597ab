#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace npuperf::agent {

// --sandbox bwrap: every child of a job runs inside bubblewrap (Debian's
// bubblewrap, unprivileged user namespaces): the host read-only, a private
// /tmp, /proc of its own pid namespace, a minimal /dev, only the job
// directory (and `writable`) writable, and of the device nodes under
// `device_node_dir` only the leased device's davinci<N> and the shared
// control nodes (kSharedDeviceNodes). Environment variables select a device;
// this makes the others unreachable.
struct SandboxOptions {
  std::string bwrap = "bwrap";             // the bwrap binary (looked up on PATH)
  std::string device_node_dir = "/dev";    // --device-node-dir (msprof-sim: a directory of files)
  std::vector<std::string> writable = {};  // --sandbox-writable: more writable directories
};

// The control nodes every device's job needs on an Ascend host.
inline constexpr const char* kSharedDeviceNodes[] = {"davinci_manager", "devmm_svm", "hisi_hdc"};

// argv wrapped in bwrap for a job on `device` whose scratch is job_dir, run
// from cwd. Nodes that do not exist on the host are skipped (bwrap's *-try
// binds). Pure: no file is touched.
std::vector<std::string> SandboxArgv(const SandboxOptions& options, int device,
                                     const std::filesystem::path& job_dir, const std::string& cwd,
                                     const std::vector<std::string>& argv);

}  // namespace npuperf::agent
