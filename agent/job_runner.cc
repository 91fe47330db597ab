#include "agent/job_runner.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/constants.h"
#include "agent/host_setup.h"
#include "agent/job_environment.h"
#include "agent/msprof_modes.h"
#include "evidence/cases.h"
#include "evidence/evidence.h"
#include "evidence/evidence_proto.h"
#include "evidence/golden.h"
#include "evidence/soc_table.h"
#include "evidence/task_time.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

namespace {

std::string ReadTail(const fs::path& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  const size_t start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string out(size - start, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int SelectedCaseLines(const std::string& stdout_text, const std::string& case_id, int* other) {
  int matches = 0;
  *other = 0;
  for (absl::string_view line : absl::StrSplit(stdout_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "PYPTO_PERF_SELECTED_CASE=")) continue;
    if (absl::StripTrailingAsciiWhitespace(line) == case_id) {
      ++matches;
    } else {
      ++*other;
    }
  }
  return matches;
}

// The case manifest at `relative` inside the unpacked bundle, read without
// following symlinks (ReadBundleFile); errors name no host path.
absl::StatusOr<evidence::CaseManifest> LoadBundleManifest(const fs::path& operator_dir,
                                                          const std::string& relative) {
  auto bytes = ReadBundleFile(operator_dir, relative, "manifest_path", kMaxManifestBytes);
  if (!bytes.ok()) return bytes.status();
  evidence::SourceRecord source;
  std::error_code ec;
  source.path = (fs::weakly_canonical(operator_dir, ec) / relative).string();
  source.sha256 = evidence::Sha256Hex(*bytes);
  source.size_bytes = static_cast<int64_t>(bytes->size());
  return evidence::ParseCaseManifest(*bytes, std::move(source));
}

}  // namespace

JobRunner::JobRunner(ProfilerRunner& runner, Clock& clock, JobRunnerOptions options,
                     AgentMetrics* metrics)
    : runner_(runner),
      clock_(clock),
      options_(std::move(options)),
      chip_probe_(runner, clock, options_.npu_smi,
                  options_.npu_smi_scratch.empty()
                      ? std::filesystem::temp_directory_path() / "npuperf-npu-smi"
                      : options_.npu_smi_scratch),
      metrics_(metrics) {}

void JobRunner::Report(const JobContext& ctx, v1::JobPhase phase, int step, int steps,
                       const std::string& detail, int repeat, int repeats) {
  if (!ctx.progress) return;
  v1::JobProgress p;
  p.set_phase(phase);
  p.set_step(step);
  p.set_step_count(steps);
  p.set_detail(detail);
  p.set_repeat(repeat);
  p.set_repeat_count(repeats);
  ctx.progress(p);
}

void JobRunner::Account(const JobContext& ctx, const Child& child,
                        Clock::MonotonicTime::duration took) {
  if (ctx.timings == nullptr) return;
  const double took_s = std::chrono::duration<double>(took).count();
  if (!child.msprof_group.empty()) {
    ctx.timings->msprof += took_s;
    ++ctx.timings->msprof_runs;
  } else if (absl::StartsWith(child.label, "preflight")) {
    ctx.timings->preflight += took_s;
  } else {
    ctx.timings->warm_up += took_s;
  }
}

ProfilerSpec JobRunner::SpecFor(const JobContext& ctx, const Child& child, const std::string& out,
                                const std::string& err) const {
  ProfilerSpec spec{child.argv, child.env, ctx.operator_dir.string(), out, err};
  spec.contain = true;
  spec.cgroup_procs_fd = ctx.cgroup_procs_fd;
  spec.cgroup = ctx.cgroup;
  if (auto it = options_.run_users.find(ctx.job.device_id()); it != options_.run_users.end()) {
    spec.run_as = it->second;
    ApplyRunAsEnv(it->second, &spec.env);
    if (options_.nproc_limit > 0) {
      spec.rlimits.emplace_back(RLIMIT_NPROC, static_cast<uint64_t>(options_.nproc_limit));
    }
  }
  if (options_.sandbox) {
    const fs::path job_dir = ctx.job_dir.empty() ? ctx.session_dir.parent_path() : ctx.job_dir;
    spec.argv = SandboxArgv(*options_.sandbox, ctx.job.device_id(), job_dir, spec.cwd, spec.argv);
  }
  return spec;
}

ExitStatus JobRunner::AwaitChild(const JobContext& ctx, ProfilerProcess& process,
                                 Clock::MonotonicTime deadline, bool* cancelled) {
  ExitStatus status;
  while (true) {
    status = process.Wait(std::min(deadline, clock_.MonotonicNow() + kCancelPoll));
    if (!status.timed_out) break;
    *cancelled = ctx.cancel != nullptr && ctx.cancel->load();
    if (*cancelled || clock_.MonotonicNow() >= deadline) {
      status = process.Terminate(kKillGrace);
      break;
    }
  }
  process.Terminate(std::chrono::milliseconds(0));  // reap stragglers of the group
  return status;
}

void JobRunner::CountMsprofRun(const Child& child, bool cancelled, bool timed_out,
                               const ExitStatus& status) {
  if (metrics_ == nullptr || child.msprof_group.empty()) return;
  const char* outcome = cancelled     ? "cancelled"
                        : timed_out   ? "timeout"
                        : status.ok() ? "ok"
                                      : "failed";
  metrics_->msprof_runs.Add({{"group", child.msprof_group}, {"outcome", outcome}}).Increment();
}

void JobRunner::AppendLog(const JobContext& ctx, const Child& child, bool cancelled,
                          const ExitStatus& status, const fs::path& out,
                          const std::string& stderr_tail) {
  std::ofstream log(ctx.session_dir / "collection.log", std::ios::app);
  log << "$ " << absl::StrJoin(child.argv, " ") << "\n"
      << "exit: " << (cancelled ? "cancelled" : status.ToString()) << "\n"
      << "--- stdout (tail) ---\n"
      << ReadTail(out, kLogTailBytes) << "\n"
      << "--- stderr (tail) ---\n"
      << stderr_tail << "\n\n";
}

absl::Status JobRunner::RunChild(const JobContext& ctx, const Child& child,
                                 Clock::MonotonicTime deadline, std::string* stdout_text) {
  const fs::path out = ctx.session_dir / (child.label + ".stdout");
  const fs::path err = ctx.session_dir / (child.label + ".stderr");
  const auto started = clock_.MonotonicNow();
  absl::Cleanup account = [&] { Account(ctx, child, clock_.MonotonicNow() - started); };
  auto process = runner_.Start(SpecFor(ctx, child, out.string(), err.string()));
  if (!process.ok()) return absl::FailedPreconditionError(process.status().message());
  bool cancelled = false;
  const ExitStatus status = AwaitChild(ctx, **process, deadline, &cancelled);
  const bool timed_out = !cancelled && !status.ok() && clock_.MonotonicNow() >= deadline;
  CountMsprofRun(child, cancelled, timed_out, status);
  const std::string tail = ReadTail(err, kLogTailBytes);
  AppendLog(ctx, child, cancelled, status, out, tail);
  if (cancelled) return absl::CancelledError("job cancelled");
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(child.label, " exceeded the job timeout"));
  }
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat(child.label, " failed (", status.ToString(),
                     "); stderr tail: ", tail.substr(tail.size() > 500 ? tail.size() - 500 : 0)));
  }
  if (stdout_text != nullptr) *stdout_text = ReadAll(out);
  return absl::OkStatus();
}

void JobRunner::AddParseTime(const JobContext& ctx, Clock::MonotonicTime started) {
  if (ctx.timings != nullptr) ctx.timings->parse += SecondsBetween(started, clock_.MonotonicNow());
}

absl::Status JobRunner::Preflight(const JobContext& ctx, const std::vector<std::string>& base_app,
                                  Clock::MonotonicTime deadline) {
  const v1::JobAssignment& job = ctx.job;
  if (job.case_id().empty()) return absl::OkStatus();
  Report(ctx, v1::JOB_PHASE_PREFLIGHT, 1, 2, "unknown case id must fail");
  const std::string unknown =
      absl::StrFormat("npuperf-unknown-%016x", absl::Uniform<uint64_t>(absl::BitGen()));
  auto runner = FindRunner(ctx.operator_dir, job.runner());
  if (!runner.ok()) return runner.status();
  Child probe{RunnerArgv(options_.python, *runner, job, unknown),
              PreflightEnv(options_.agent_env, job, unknown), "preflight_unknown"};
  absl::Status s = RunChild(ctx, probe, deadline, nullptr);
  if (absl::IsCancelled(s) || absl::IsDeadlineExceeded(s)) return s;
  if (s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("selector preflight: the runner accepted the unknown case id '", unknown,
                     "', so it ignores its case selector; refusing to profile"));
  }
  Report(ctx, v1::JOB_PHASE_PREFLIGHT, 2, 2, "known case id must select exactly one case");
  Child known{base_app, PreflightEnv(options_.agent_env, job, job.case_id()), "preflight_known"};
  std::string out;
  s = RunChild(ctx, known, deadline, &out);
  if (!s.ok()) {
    if (absl::IsCancelled(s) || absl::IsDeadlineExceeded(s)) return s;
    return absl::FailedPreconditionError(
        absl::StrCat("selector preflight for case '", job.case_id(), "' failed: ", s.message()));
  }
  int other = 0;
  const int matches = SelectedCaseLines(out, job.case_id(), &other);
  if (matches != 1 || other != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "selector preflight: case '", job.case_id(), "' printed ", matches, " matching and ", other,
        " other PYPTO_PERF_SELECTED_CASE lines; exactly one matching line is required"));
  }
  return absl::OkStatus();
}

absl::Status JobRunner::WarmUp(const JobContext& ctx, const std::vector<std::string>& app,
                               Clock::MonotonicTime deadline) {
  const int n = ctx.job.params().warm_up();
  for (int i = 1; i <= n; ++i) {
    Report(ctx, v1::JOB_PHASE_WARM_UP, i, n, "warm-up");
    Child child{app, RunnerEnv(options_.agent_env, ctx.job), absl::StrCat("warmup_", i)};
    if (auto s = RunChild(ctx, child, deadline, nullptr); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Evidence> JobRunner::RunQuick(const JobContext& ctx,
                                                 const std::vector<std::string>& app,
                                                 Clock::MonotonicTime deadline,
                                                 const evidence::LaunchSelector& launch) {
  const int repeats = ctx.job.params().repeats();
  std::vector<evidence::KernelTiming> timings;
  for (int i = 1; i <= repeats; ++i) {
    Report(ctx, v1::JOB_PHASE_TIMING_RUN, i, repeats, "task-time", i, repeats);
    const fs::path output = ctx.session_dir / absl::StrCat("repeat_", i);
    Child child{QuickArgv(options_.msprof, output.string(), app),
                RunnerEnv(options_.agent_env, ctx.job), absl::StrCat("repeat_", i), "TaskTime"};
    if (auto s = RunChild(ctx, child, deadline, nullptr); !s.ok()) return s;
    Report(ctx, v1::JOB_PHASE_PARSING, i, repeats, "task_time", i, repeats);
    const auto parse_started = clock_.MonotonicNow();
    auto timing = evidence::ReadQuickTiming(output, ctx.job.op_name(), launch);
    AddParseTime(ctx, parse_started);
    if (!timing.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("repeat ", i, ": ", timing.status().message()));
    }
    timings.push_back(*std::move(timing));
  }
  v1::Evidence e;
  evidence::ToProto(evidence::QuickEvidence(timings), &e);
  return e;
}

absl::StatusOr<std::optional<double>> JobRunner::GoldenForCase(const JobContext& ctx) {
  const v1::JobAssignment& job = ctx.job;
  const fs::path manifest_path =
      job.manifest_path().empty() ? "PERFORMANCE_CASES.json" : job.manifest_path();
  const fs::path golden_path = ctx.operator_dir / "GOLDEN_PERF_REPORT.json";
  std::error_code ec;
  if (!fs::exists(golden_path, ec)) return std::optional<double>();
  auto manifest = LoadBundleManifest(ctx.operator_dir, manifest_path.string());
  if (!manifest.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("compare mode: ", manifest.status().message()));
  }
  std::string case_id = job.case_id();
  if (case_id.empty()) {
    if (manifest->cases.size() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "compare mode: ", manifest_path.filename().string(), " has ", manifest->cases.size(),
          " cases but the job names none; submit with --manifest or --case-id so each job measures "
          "one case"));
    }
    case_id = manifest->cases.front().id;
  }
  auto contract = evidence::LoadGoldenContract(golden_path);
  if (!contract.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("compare mode: ", contract.status().message()));
  }
  auto joined = evidence::JoinGolden(*manifest, *contract);
  if (!joined.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("compare mode: ", joined.status().message()));
  }
  auto it = joined->find(case_id);
  if (it == joined->end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "compare mode: case '", case_id, "' is not in ", manifest_path.filename().string()));
  }
  return std::optional<double>(it->second);
}

absl::StatusOr<v1::Evidence> JobRunner::RunStandard(const JobContext& ctx,
                                                    const std::vector<std::string>& app,
                                                    Clock::MonotonicTime deadline,
                                                    std::optional<double> golden_us,
                                                    const evidence::LaunchSelector& launch) {
  const v1::JobAssignment& job = ctx.job;
  const int repeats = job.params().repeats();
  const bool memory_access = evidence::HasMemoryAccessGroup(job.soc());
  const int seven = static_cast<int>(kMetricGroups.size());
  const int steps = seven + (memory_access ? 1 : 0);
  std::vector<evidence::Evidence> per_repeat;
  std::vector<std::string> warnings;
  for (int r = 1; r <= repeats; ++r) {
    const fs::path group = ctx.session_dir / absl::StrCat("repeat_", r);
    for (int m = 0; m < steps; ++m) {
      const std::string metric = m < seven ? kMetricGroups[m] : kMemoryAccessGroup;
      Report(ctx, v1::JOB_PHASE_METRIC_RUN, m + 1, steps, metric, r, repeats);
      const fs::path output = group / ("PROF_" + metric);
      Child child{MetricArgv(options_.msprof, output.string(), metric, app),
                  RunnerEnv(options_.agent_env, job), absl::StrCat("repeat_", r, "_", metric),
                  metric};
      absl::Status s = RunChild(ctx, child, deadline, nullptr);
      if (s.ok()) continue;
      if (m < seven || absl::IsCancelled(s) || absl::IsDeadlineExceeded(s)) {
        return absl::Status(s.code(), absl::StrCat("metric run ", metric, ": ", s.message()));
      }
      // The optional group: without it the roofline says which bytes are missing.
      std::error_code ec;
      fs::remove_all(output, ec);
      warnings.push_back(absl::StrCat("repeat ", r, " MemoryAccess run failed: ", s.message()));
    }
    if (!job.params().skip_sample_run()) {
      Report(ctx, v1::JOB_PHASE_SAMPLE_RUN, 1, 1, "sample-based", r, repeats);
      Child sample{SampleArgv(options_.msprof, (group / "PROF_Sample").string(), app),
                   RunnerEnv(options_.agent_env, job), absl::StrCat("repeat_", r, "_Sample"),
                   "Sample"};
      absl::Status s = RunChild(ctx, sample, deadline, nullptr);
      if (absl::IsCancelled(s) || absl::IsDeadlineExceeded(s)) return s;
      // The reference treats a failed sample run as a warning: per-core data is then missing.
      if (!s.ok())
        warnings.push_back(absl::StrCat("repeat ", r, " sample run failed: ", s.message()));
    }
    Report(ctx, v1::JOB_PHASE_PARSING, r, repeats, "evidence", r, repeats);
    evidence::BuildOptions options;
    options.op_name = job.op_name();
    options.launch = launch;
    options.device_id = job.device_id();
    options.soc = job.soc();
    options.golden_per_iteration_us = golden_us;
    const auto parse_started = clock_.MonotonicNow();
    auto ev = evidence::BuildEvidence(group, options);
    AddParseTime(ctx, parse_started);
    if (!ev.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("repeat ", r, ": ", ev.status().message()));
    }
    per_repeat.push_back(*std::move(ev));
  }
  v1::Evidence e;
  evidence::ToProto(evidence::CombineRepeats(std::move(per_repeat)), &e);
  for (auto& w : warnings) e.add_warnings(std::move(w));
  return e;
}

void JobRunner::FillFingerprint(const JobContext& ctx, const std::vector<std::string>& app,
                                v1::Evidence* e) const {
  const v1::JobAssignment& job = ctx.job;
  auto* f = e->mutable_fingerprint();
  f->set_soc(job.soc());
  f->set_device_id(job.device_id());
  f->set_host(options_.host);
  f->set_msprof_version(options_.msprof_version);
  f->set_cann_version(options_.cann_version);
  f->set_driver_version(options_.driver_version);
  f->set_bundle_sha256(job.bundle_sha256());
  // The runner path is inside a per-job scratch dir; keep it relative.
  for (const auto& a : app) {
    const fs::path p(a);
    f->add_argv(p.is_absolute() && a.rfind(ctx.operator_dir.string(), 0) == 0
                    ? fs::relative(p, ctx.operator_dir).string()
                    : a);
  }
  f->set_warm_up(job.params().warm_up());
  f->set_repeats(job.params().repeats());
  f->set_seed(job.params().seed());
  f->set_clock_state(e->dvfs().status() == "suspect" ? "dvfs_suspect"
                     : e->dvfs().status() == "ok"    ? "rated"
                                                     : "unknown");
  f->set_agent_version(options_.agent_version);
  f->set_mode(job.params().mode() == v1::PROFILE_MODE_STANDARD   ? "standard"
              : job.params().mode() == v1::PROFILE_MODE_QUICK    ? "quick"
              : job.params().mode() == v1::PROFILE_MODE_TIMELINE ? "timeline"
                                                                 : "compare");
  e->set_operator_name(job.operator_name());
  e->set_case_id(job.case_id());
}

absl::Status JobRunner::GiveJobDir(const JobContext& ctx, const RunAsUser& user) {
  // The runner reads (and may write) its operator directory; msprof writes the session.
  const std::vector<fs::path> dirs = ctx.job_dir.empty()
                                         ? std::vector<fs::path>{ctx.operator_dir, ctx.session_dir}
                                         : std::vector<fs::path>{ctx.job_dir};
  for (const fs::path& dir : dirs) {
    if (auto s = ChownTree(dir, user); !s.ok()) return s;
  }
  if (!ctx.job_dir.empty() && ::chmod(ctx.job_dir.c_str(), 0700) != 0) {
    return absl::InternalError(absl::StrCat("chmod 0700 ", ctx.job_dir.string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> JobRunner::JobApp(const JobContext& ctx) const {
  auto runner = FindRunner(ctx.operator_dir, ctx.job.runner());
  if (!runner.ok()) return runner.status();
  return RunnerArgv(options_.python, *runner, ctx.job, ctx.job.case_id());
}

template <typename Body>
auto JobRunner::InJobSession(const JobContext& ctx, Body body) -> decltype(body()) {
  if (auto s = CheckJobInputs(ctx.job); !s.ok()) return s;
  std::error_code ec;
  fs::create_directories(ctx.session_dir, ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("create ", ctx.session_dir.string(), ": ", ec.message()));
  std::optional<FsIdentity> as_user;
  if (!options_.run_users.empty()) {
    auto it = options_.run_users.find(ctx.job.device_id());
    if (it == options_.run_users.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("no run user for device ", ctx.job.device_id(), " (--run-as-pool)"));
    }
    if (auto s = GiveJobDir(ctx, it->second); !s.ok()) return s;
    as_user.emplace(it->second.uid, it->second.gid);
  }
  return body();
}

absl::StatusOr<v1::Evidence> JobRunner::Run(const JobContext& ctx) {
  return InJobSession(ctx, [&] { return RunAsJob(ctx); });
}

absl::StatusOr<evidence::Discovery> JobRunner::Discover(const JobContext& ctx) {
  return InJobSession(ctx, [&]() -> absl::StatusOr<evidence::Discovery> {
    const auto deadline = JobDeadline(ctx);
    absl::StatusOr<std::vector<std::string>> app = JobApp(ctx);
    if (!app.ok()) return app.status();
    if (auto s = Preflight(ctx, *app, deadline); !s.ok()) return s;
    Report(ctx, v1::JOB_PHASE_TIMING_RUN, 1, 1, "discovery (task-time)", 1, 1);
    const fs::path output = ctx.session_dir / "discovery";
    Child child{QuickArgv(options_.msprof, output.string(), *app),
                RunnerEnv(options_.agent_env, ctx.job), "discovery", "TaskTime"};
    if (auto s = RunChild(ctx, child, deadline, nullptr); !s.ok()) return s;
    Report(ctx, v1::JOB_PHASE_PARSING, 1, 1, "candidates", 1, 1);
    const auto parse_started = clock_.MonotonicNow();
    absl::StatusOr<evidence::Discovery> found = evidence::DiscoverCandidates(output);
    AddParseTime(ctx, parse_started);
    if (found.ok()) return found;
    return absl::FailedPreconditionError(absl::StrCat("discovery: ", found.status().message()));
  });
}

absl::StatusOr<v1::Evidence> JobRunner::RunAsJob(const JobContext& ctx) {
  const auto deadline = JobDeadline(ctx);
  absl::StatusOr<std::vector<std::string>> runner_app = JobApp(ctx);
  if (!runner_app.ok()) return runner_app.status();
  const std::vector<std::string>& app = *runner_app;
  const v1::ProfileMode mode = ctx.job.params().mode();
  if (mode != v1::PROFILE_MODE_STANDARD && mode != v1::PROFILE_MODE_QUICK &&
      mode != v1::PROFILE_MODE_COMPARE && mode != v1::PROFILE_MODE_TIMELINE) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile mode ", v1::ProfileMode_Name(mode),
                     " is not supported by this agent version (standard, quick, compare, "
                     "timeline); upgrade the agent"));
  }
  // Compare mode joins the golden data before any device work (reference §7.4).
  absl::StatusOr<std::optional<double>> golden = std::optional<double>();
  if (mode == v1::PROFILE_MODE_COMPARE) golden = GoldenForCase(ctx);
  if (!golden.ok()) return golden.status();
  // Checked at submission; checked again here, before any device work.
  absl::StatusOr<evidence::LaunchSelector> launch = evidence::ParseLaunchSelector(ctx.job.launch());
  if (!launch.ok()) return launch.status();
  if (auto s = Preflight(ctx, app, deadline); !s.ok()) return s;
  if (auto s = WarmUp(ctx, app, deadline); !s.ok()) return s;
  absl::StatusOr<v1::DeviceReading> before = ChipBefore(ctx);
  if (!before.ok()) return before.status();
  // Compare = the standard protocol (seven metric runs + sample per repeat)
  // with the golden ratio (reference §6.1, §7.6).
  absl::StatusOr<v1::Evidence> evidence =
      mode == v1::PROFILE_MODE_QUICK      ? RunQuick(ctx, app, deadline, *launch)
      : mode == v1::PROFILE_MODE_TIMELINE ? RunTimeline(ctx, app, deadline)
                                          : RunStandard(ctx, app, deadline, *golden, *launch);
  if (!evidence.ok()) return evidence;
  if (mode == v1::PROFILE_MODE_COMPARE && !golden->has_value()) {
    evidence->add_warnings(
        "compare mode: the operator directory has no GOLDEN_PERF_REPORT.json; golden ratio not "
        "provided");
  }
  FillFingerprint(ctx, app, &*evidence);
  if (absl::Status s = ChipAfter(ctx, *std::move(before), &*evidence); !s.ok()) return s;
  return evidence;
}

absl::StatusOr<v1::DeviceReading> JobRunner::ChipBefore(const JobContext& ctx) {
  if (!chip_probe_.enabled()) return v1::DeviceReading();
  v1::DeviceReading r = chip_probe_.Read(ctx.job.device_id());
  if (const std::string critical = CriticalReason(r); !critical.empty()) {
    return absl::UnavailableError(
        absl::StrCat("device ", ctx.job.device_id(), " before the profiled runs: ", critical));
  }
  return r;
}

absl::Status JobRunner::ChipAfter(const JobContext& ctx, v1::DeviceReading before,
                                  v1::Evidence* e) {
  if (!chip_probe_.enabled()) return absl::OkStatus();
  v1::DeviceReading after = chip_probe_.Read(ctx.job.device_id());
  if (const std::string critical = CriticalReason(after); !critical.empty()) {
    return absl::UnavailableError(
        absl::StrCat("device ", ctx.job.device_id(), " went critical during the run: ", critical));
  }
  for (const v1::DeviceReading* r : {&before, &after}) {
    const char* when = r == &before ? "before" : "after";
    if (ClassifyHealth(r->health()) == ChipHealth::kWarning) {
      e->add_warnings(absl::StrCat("npu-smi ", when, " the profiled runs: Health Status ",
                                   r->health(), " (error code ", r->error_code(), ")"));
    }
    if (ClockLow(*r)) {
      e->add_warnings(absl::StrCat("npu-smi ", when, " the profiled runs: AI Core at ",
                                   r->aicore_current_mhz(), " MHz of ", r->aicore_rated_mhz(),
                                   " rated (down-clocked)"));
    }
  }
  *e->mutable_fingerprint()->mutable_device_before() = std::move(before);
  *e->mutable_fingerprint()->mutable_device_after() = std::move(after);
  return absl::OkStatus();
}

}  // namespace npuperf::agent
