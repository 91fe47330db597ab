#include "agent/sandbox.h"

#include "absl/strings/str_cat.h"

namespace npuperf::agent {

std::vector<std::string> SandboxArgv(const SandboxOptions& options, int device,
                                     const std::filesystem::path& job_dir, const std::string& cwd,
                                     const std::vector<std::string>& argv) {
  std::vector<std::string> out = {options.bwrap,
                                  "--die-with-parent",
                                  "--new-session",
                                  "--unshare-pid",
                                  "--unshare-ipc",
                                  "--ro-bind",
                                  "/",
                                  "/",
                                  "--proc",
                                  "/proc",
                                  "--dev",
                                  "/dev",
                                  "--tmpfs",
                                  "/tmp"};
  const std::string dir = options.device_node_dir;
  // Under /dev the fresh minimal /dev already hides every node; elsewhere an
  // empty tmpfs over the directory does.
  if (dir != "/dev") out.insert(out.end(), {"--tmpfs", dir});
  std::vector<std::string> nodes = {absl::StrCat("davinci", device)};
  nodes.insert(nodes.end(), std::begin(kSharedDeviceNodes), std::end(kSharedDeviceNodes));
  for (const auto& node : nodes) {
    const std::string path = dir + "/" + node;
    out.insert(out.end(), {"--dev-bind-try", path, path});
  }
  for (const auto& w : options.writable) out.insert(out.end(), {"--bind", w, w});
  out.insert(out.end(), {"--bind", job_dir.string(), job_dir.string()});
  if (!cwd.empty()) out.insert(out.end(), {"--chdir", cwd});
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace npuperf::agent
