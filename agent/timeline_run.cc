// JobRunner::RunTimeline: the supplemental instruction profile of one case
// (PROFILE_MODE_TIMELINE; reference-scripts.md §2.10, §5.7).
#include <fstream>

#include "absl/strings/str_cat.h"
#include "agent/job_environment.h"
#include "agent/job_runner.h"
#include "agent/msprof_modes.h"
#include "evidence/timeline.h"

namespace npuperf::agent {
namespace fs = std::filesystem;
namespace {

// The one summary the service keeps of a timeline; the document itself is
// the round's evidence_json.
void FillTimeline(const evidence::TimelineEvidence& t, const evidence::TimelineDeviceFiles& files,
                  v1::TimelineSummary* s) {
  s->set_attribution_status(t.attribution_status);
  s->set_pipeline_evidence_status(t.pipeline_evidence_status);
  s->set_target_start_ns(t.target_start_ns);
  s->set_target_duration_ns(t.target_duration_ns);
  s->set_monitored_lanes(static_cast<int32_t>(t.monitored_lanes.size()));
  s->set_events_in_window(t.events_in_window);
  s->set_raw_event_pairs(t.raw_event_pairs);
  s->set_overlap_ns(t.overlap_ns);
  for (const auto& [pipe, n] : t.pipe_event_counts) (*s->mutable_pipe_event_counts())[pipe] = n;
  for (const std::string& l : t.limitations) s->add_limitations(l);
  s->set_trace_bytes(static_cast<int64_t>(t.trace_bytes));
  s->set_biu_rows(files.biu_rows);
  s->set_ascend_task_rows(files.ascend_task_rows);
}

}  // namespace

absl::StatusOr<v1::Evidence> JobRunner::RunTimeline(const JobContext& ctx,
                                                    const std::vector<std::string>& app,
                                                    Clock::MonotonicTime deadline) {
  const fs::path output = ctx.session_dir / "timeline";
  Report(ctx, v1::JOB_PHASE_METRIC_RUN, 1, 2, "instruction profile (--instr-profiling=on)", 1, 1);
  Child collect{TimelineArgv(options_.msprof, output.string(), app),
                RunnerEnv(options_.agent_env, ctx.job), "timeline", "Timeline"};
  if (auto s = RunChild(ctx, collect, deadline, nullptr); !s.ok()) return s;
  absl::StatusOr<evidence::TimelineDeviceFiles> files =
      evidence::FindTimelineDeviceFiles(output, ctx.job.device_id());
  if (!files.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("timeline: ", files.status().message()));
  }
  // The export with the BIU section: the trace's Group lanes.
  const fs::path reports = ctx.session_dir / "reports.json";
  {
    std::ofstream out(reports, std::ios::trunc);
    out << kTimelineReports << "\n";
    if (!out.flush()) return absl::InternalError(absl::StrCat("write ", reports.string()));
  }
  Report(ctx, v1::JOB_PHASE_METRIC_RUN, 2, 2, "timeline export (biu_perf)", 1, 1);
  Child exp{TimelineExportArgv(options_.msprof, files->prof_dir.string(), reports.string()),
            RunnerEnv(options_.agent_env, ctx.job), "timeline_export", "TimelineExport"};
  if (auto s = RunChild(ctx, exp, deadline, nullptr); !s.ok()) return s;
  Report(ctx, v1::JOB_PHASE_PARSING, 1, 1, "timeline", 1, 1);
  const auto parse_started = clock_.MonotonicNow();
  absl::StatusOr<fs::path> trace = evidence::FindTimelineTrace(files->prof_dir);
  absl::StatusOr<evidence::TimelineEvidence> t =
      trace.ok() ? evidence::SummarizeTimeline(*trace, {.op_name = ctx.job.op_name()})
                 : absl::StatusOr<evidence::TimelineEvidence>(trace.status());
  AddParseTime(ctx, parse_started);
  if (!t.ok())
    return absl::FailedPreconditionError(absl::StrCat("timeline: ", t.status().message()));
  // One measured target launch or fail closed (reference-scripts.md §2.11).
  if (t->attribution_status != "unique_exact_target_window") {
    return absl::FailedPreconditionError(absl::StrCat(
        "timeline: ", t->attribution_status, ": ", t->target_candidates, " task events named ",
        ctx.job.op_name(), " in ", trace->filename().string(), " (one is needed)"));
  }
  v1::Evidence e;
  e.set_op_name(ctx.job.op_name());
  FillTimeline(*t, *files, e.mutable_timeline());
  if (files->ascend_task_rows < 0) {
    e.add_warnings("the capture has no ascend_task.db: the archive lacks task timing");
  }
  e.set_evidence_json(evidence::TimelineToJson(*t));
  e.set_summary_text(evidence::TimelineToText(*t));
  return e;
}

}  // namespace npuperf::agent
