#include "tests/chaos/workload.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::chaos {
namespace fs = std::filesystem;
using testing::BuildDir;
using testing::SourceDir;
using testing::WallClock;

namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr int kPriorities[] = {-5, 0, 5};
// How long one collection's submission may keep trying the replicas.
constexpr std::chrono::seconds kSubmitWindow(90);

}  // namespace

Workload::Workload(const Fleet& fleet, fs::path dir, uint64_t seed, int target_jobs,
                   std::chrono::seconds spread)
    : fleet_(fleet),
      dir_(std::move(dir)),
      seed_(seed),
      target_jobs_(target_jobs),
      spread_(spread),
      rng_(seed ^ 0x5eedf00dULL) {
  for (const auto& r : fleet_.replicas()) addresses_.push_back(r.address);
  fs::create_directories(dir_);
}

Workload::~Workload() {
  RequestStop();
  Join();
}

void Workload::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Workload::Join() {
  if (thread_.joinable()) thread_.join();
}

std::vector<Submitted> Workload::submitted() {
  absl::MutexLock l(&mu_);
  return submitted_;
}

int Workload::submit_failures() {
  absl::MutexLock l(&mu_);
  return submit_failures_;
}

std::string Workload::TokenOf(const std::string& team) const {
  for (const auto& t : fleet_.teams()) {
    if (t.name == team) return t.token;
  }
  return "";
}

// Variants: 0 a quick batch over every example operator (29 jobs), 1 quick
// inplace_add_rmsnorm (4 cases), 2 standard inplace_add_rmsnorm (2 cases).
std::vector<std::string> Workload::SubmitArgs(int variant, int priority, int n) const {
  const std::string ops = (SourceDir() / "examples/ops").string();
  std::vector<std::string> a = {"--format",
                                "json",
                                "submit",
                                "--no-wait",
                                "--warm-up",
                                "0",
                                "--repeats",
                                "1",
                                "--retry",
                                "2",
                                "--job-timeout",
                                "60",
                                "--priority",
                                std::to_string(priority),
                                "--idempotency-key",
                                absl::StrCat("chaos-", seed_, "-", n)};
  // Last: --label takes every word up to the next flag.
  const std::string label = absl::StrCat("--label=chaos=", seed_);
  if (variant == 0) {
    a.insert(a.end(), {"--quick", "--batch", ops, "--op-name-map",
                       (SourceDir() / "deploy/demo-op-names.json").string(), label});
    return a;
  }
  a.insert(a.end(),
           {ops + "/inplace_add_rmsnorm", "--op-name", kRmsNormKernel, "--case-arg=--case-id"});
  if (variant == 1) {
    a.insert(a.end(), {"--quick", "--case-id", "p0", "--case-id", "p1", "--case-id", "p2",
                       "--case-id", "s1"});
  } else {
    a.insert(a.end(), {"--case-id", "p0", "--case-id", "s1"});
  }
  a.push_back(label);
  return a;
}

bool Workload::SubmitOne(int n) {
  static constexpr const char* kKinds[] = {"quick-batch", "quick", "standard"};
  // Mostly quick: the soak needs hundreds of jobs on a few simulated devices.
  const int variant = n % 10 == 3 ? 0 : (n % 4 == 1 ? 2 : 1);
  const Team& team = fleet_.teams()[rng_() % fleet_.teams().size()];
  const int priority = kPriorities[rng_() % 3];
  const auto deadline = WallClock().MonotonicNow() + kSubmitWindow;
  for (int attempt = 0; !stop_ && WallClock().MonotonicNow() < deadline; ++attempt) {
    std::vector<std::string> argv = {(BuildDir() / "bin/npuperf").string(), "--server",
                                     addresses_[(n + attempt) % addresses_.size()], "--token",
                                     team.token};
    for (auto& s : SubmitArgs(variant, priority, n)) argv.push_back(std::move(s));
    auto r = testing::RunCommand(argv, dir_, {}, std::chrono::seconds(60));
    v1::Collection c;
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = true;
    if (r.exit_code == 0 && google::protobuf::util::JsonStringToMessage(r.out, &c, options).ok() &&
        !c.id().empty()) {
      Submitted s{c.id(), team.name, kKinds[variant], priority, c.counts().total(), false};
      if (rng_() % 15 == 0) {
        cancels_.push_back({c.id(), team.token,
                            WallClock().MonotonicNow() + std::chrono::seconds(2 + rng_() % 8)});
        s.cancel_requested = true;
      }
      absl::MutexLock l(&mu_);
      submitted_.push_back(s);
      return true;
    }
    if (r.out.find("INVALID_ARGUMENT") != std::string::npos) {
      std::fprintf(stderr, "chaos: submission refused for good: %s%s\n", r.out.c_str(),
                   r.err.c_str());
      return false;
    }
    WallClock().SleepFor(std::chrono::milliseconds(500));
  }
  return false;
}

void Workload::CancelDue(bool all) {
  for (auto it = cancels_.begin(); it != cancels_.end();) {
    if (!all && it->at > WallClock().MonotonicNow()) {
      ++it;
      continue;
    }
    for (const auto& address : addresses_) {
      auto r = testing::RunCommand({(BuildDir() / "bin/npuperf").string(), "--server", address,
                                    "--token", it->token, "cancel", it->id},
                                   dir_, {}, std::chrono::seconds(30));
      if (r.exit_code == 0) break;
    }
    it = cancels_.erase(it);
  }
}

void Workload::Loop() {
  const auto start = WallClock().MonotonicNow();
  int jobs = 0;
  for (int n = 0; !stop_ && jobs < target_jobs_; ++n) {
    if (SubmitOne(n)) {
      absl::MutexLock l(&mu_);
      jobs += submitted_.back().jobs;
    } else {
      absl::MutexLock l(&mu_);
      ++submit_failures_;
    }
    CancelDue(false);
    // Pace: the share of the spread that the jobs submitted so far stand for.
    const auto due = start + spread_ * jobs / std::max(1, target_jobs_);
    while (!stop_ && WallClock().MonotonicNow() < due) {
      CancelDue(false);
      WallClock().SleepFor(std::chrono::milliseconds(200));
    }
  }
  CancelDue(true);
}

}  // namespace npuperf::chaos
