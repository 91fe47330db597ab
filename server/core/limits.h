// The limits table of npuperf-server: every bound the server puts on what a
// client or an agent sends, in one place. docs/api.md ("Limits") lists the
// same table; a value changed here changes there. Strings are measured in
// bytes (UTF-8). A request over a limit is refused before anything is
// stored: INVALID_ARGUMENT with a google.rpc.BadRequest naming each field
// (submission.h, evidence_validator.h, read_queries.h), or
// RESOURCE_EXHAUSTED for a quota (queued jobs of a team, bundle size).
//
// The two quotas an operator may change are flags (InputLimits, in
// SchedulerOptions); everything else is part of the API contract and changes
// with a release.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "common/input_rules.h"

namespace npuperf::server {

// --- Transport ---
// Largest gRPC message the server accepts (a bundle arrives in chunks).
inline constexpr int kMaxReceiveMessageBytes = 64 << 20;

// --- Agents (RegisterAgent, heartbeats, LeaseJob offers; core/agent_rules.h) ---
// The most devices one agent serves, the range of device ids, the most
// labels and capabilities with the longest key, value and other string
// (host name, version...), and the most running jobs one message lists.
// Above them: INVALID_ARGUMENT naming each field (docs/api.md, "Agent
// limits").
inline constexpr int kMaxAgentDevices = 64;
inline constexpr int32_t kMaxAgentDeviceId = 4095;
inline constexpr int kMaxAgentLabels = 32;
inline constexpr size_t kMaxAgentLabelValueBytes = 255;
inline constexpr int kMaxAgentCapabilities = 16;
inline constexpr size_t kMaxAgentStringBytes = 255;
inline constexpr int kMaxAgentRunningJobs = 1024;
// DeviceInfo.reading (an npu-smi reading): its clocks; its strings have
// kMaxAgentStringBytes, temperature -273..1000 C, power 0..100,000 W.
inline constexpr int32_t kMaxChipClockMhz = 100'000;
// LeaseJob: the longest long-poll an agent may ask for (wait_ms is
// INVALID_ARGUMENT above it).
inline constexpr std::chrono::milliseconds kMaxLeaseWait{30'000};

// The limits an operator sets with server flags.
struct InputLimits {
  // Jobs (operators x cases) one collection may expand into
  // (--max-jobs-per-collection). Default: 10,000.
  int32_t max_jobs_per_collection = 10'000;
  // Queued jobs one team may have at once, counted when it submits
  // (--max-queued-jobs-per-team); over it: RESOURCE_EXHAUSTED. 0: no limit.
  // Default: 100,000.
  int64_t max_queued_jobs_per_team = 100'000;
};

// --- CollectionSpec (SubmitCollection) ---
// Operators of one collection. Default: 1..1000.
inline constexpr int kMaxOperators = 1000;
// OperatorSpec.name, case ids, SoC names, label and host-label keys: names
// of [A-Za-z0-9_.-] (label keys [a-z0-9_.-]). Lengths: 128, 128, 64, 63.
inline constexpr size_t kMaxOperatorNameBytes = 128;
inline constexpr size_t kMaxCaseIdBytes = 128;
inline constexpr size_t kMaxSocNameBytes = 64;
inline constexpr size_t kMaxLabelKeyBytes = 63;
// An agent's label keys follow the same rule as host-label keys, which must
// match them.
inline constexpr size_t kMaxAgentLabelKeyBytes = kMaxLabelKeyBytes;
// op_name and every op_name_map value: the exact kernel name (C++ mangled
// names run long), printable, no control characters.
inline constexpr size_t kMaxOpNameBytes = 1024;
// launch and every launch_map value: a launch selector (evidence/launch.h).
inline constexpr size_t kMaxLaunchSelectorBytes = 64;
// case_ids, op_name_map and launch_map entries of one operator.
inline constexpr int kMaxCasesPerOperator = 10'000;
// runner and manifest_path: a normalised relative path inside the bundle,
// at most kMaxBundlePathBytes (256, common/input_rules.h: the agent applies
// the same rule).
// Label values; labels and host labels per collection.
inline constexpr size_t kMaxLabelValueBytes = 256;
inline constexpr int kMaxLabels = 32;
// Host-label values must equal an agent's label value to match, so they have
// its cap: a longer one could never be placed.
inline constexpr size_t kMaxHostLabelValueBytes = kMaxAgentLabelValueBytes;
// constraints.socs entries, constraints.device_range length, constraints.host
// length (printable text).
inline constexpr int kMaxSocs = 16;
inline constexpr size_t kMaxDeviceRangeBytes = 256;
// constraints.host names an agent's host: its cap.
inline constexpr size_t kMaxConstraintHostBytes = kMaxAgentStringBytes;
// Label keys with this prefix are the server's own: it sets them on the
// collections it submits (a confirmation's or a calibration's reruns), and
// refuses them in a client's spec.labels. Rounds of such collections are left
// out of series and regression listings unless their collection is asked
// for by id (Store::ListRounds).
inline constexpr char kServerLabelPrefix[] = "npuperf.";
// The server label of a timeline collection (CollectionService.SubmitTimeline):
// the id of the formal round its instruction profile anchors to.
inline constexpr char kTimelineOfLabel[] = "npuperf.timeline_of";
// Rounds one SubmitTimeline may name (each queues one job).
inline constexpr int kMaxTimelineRounds = 64;
// case_selector.case_arg (an option such as --case-id); case_env is a plain
// variable name [A-Z_][A-Z0-9_]* of at most kMaxCaseEnvBytes (64), outside
// the reserved set (common/input_rules.h, shared with the agent).
inline constexpr size_t kMaxCaseArgBytes = 64;
// CollectionSpec.description.
inline constexpr size_t kMaxDescriptionBytes = 4096;
// SubmitCollectionRequest.idempotency_key (printable ASCII).
inline constexpr size_t kMaxIdempotencyKeyBytes = 128;
// The whole CollectionSpec, serialized: every response carrying a
// collection stays under the 4 MiB default of gRPC clients.
inline constexpr size_t kMaxSpecBytes = 1 << 20;

// --- Bundles (UploadBundle) ---
// A bundle may unpack to this many times the upload limit
// (SchedulerOptions::max_bundle_bytes).
inline constexpr int64_t kMaxUnpackedFactor = 4;

// --- Other requests ---
// Collection ids in requests ("c-" + 12 hex digits are issued).
inline constexpr size_t kMaxCollectionIdBytes = 64;
// Candidates of one CompareMany (each one a CompareCollections' work), and
// the most its answer may weigh (under the 4 MiB default of gRPC clients).
inline constexpr int kMaxCompareCandidates = 16;
// Confirmations one CompareCollections or ListRegressions with confirm
// requests (each one 2 x pairs jobs); the rest are listed, not requested.
inline constexpr int kMaxConfirmationsPerRequest = 16;
inline constexpr size_t kMaxCompareManyBytes = 3 << 20;
// CompareImplementations: explicit pairs (pairs and pair_map lines
// together; a collection holds at most kMaxOperators operators, so more
// pairs cannot all name one), the pair map's bytes, and the most the answer
// may weigh (RESOURCE_EXHAUSTED over it).
inline constexpr int kMaxImplementationPairs = kMaxOperators;
inline constexpr size_t kMaxPairMapBytes = 256 << 10;
inline constexpr size_t kMaxImplementationBytes = 3 << 20;
// CancelCollectionRequest.reason.
inline constexpr size_t kMaxCancelReasonBytes = 1024;
// Label filters of ListCollections and ListRounds (count as kMaxLabels).
// ListRounds operator_name and case_id as above; metric names.
inline constexpr size_t kMaxMetricNameBytes = 256;
// PinBaselineRequest.label and ListRegressionsRequest.baseline_label
// ("key=value").
inline constexpr size_t kMaxBaselineLabelBytes = kMaxLabelKeyBytes + 1 + kMaxLabelValueBytes;
// TriageRegressionRequest.note (UTF-8; tab and newline are the only control
// characters allowed).
inline constexpr size_t kMaxTriageNoteBytes = 1024;
// ReleaseDeviceRequest.note: the same rule as a triage note.
inline constexpr size_t kMaxReleaseNoteBytes = kMaxTriageNoteBytes;

// --- Responses (paging) ---
// ListCollections: page size when the request gives none, and the largest.
inline constexpr int32_t kDefaultCollectionsPage = 50;
inline constexpr int32_t kMaxCollectionsPage = 500;
// ListQuarantines: quarantines per answer when the request gives none, and
// the most (ListAgents overlays at most this many).
inline constexpr int32_t kDefaultQuarantinesPage = 100;
inline constexpr int32_t kMaxQuarantinesPage = 1000;
// ListRounds: page size when the request gives none, and the largest.
inline constexpr int32_t kDefaultRoundsPage = 100;
inline constexpr int32_t kMaxRoundsPage = 1000;
// GetCollection: jobs per page when the request gives none, and the most.
inline constexpr int32_t kDefaultJobsPage = 1000;
inline constexpr int32_t kMaxJobsPage = 1000;
// Serialized bytes of the jobs of one page (GetCollection), of one watch
// event's changed jobs, of the collections of one ListCollections page and
// of the rounds of one ListRounds page: a page ends early rather than cross
// it (at least one item per page). With kMaxSpecBytes this keeps every
// response under 4 MiB.
inline constexpr size_t kMaxPageBytes = 2 << 20;

// --- Agent reports (ReportProgress, ReportResult) ---
// ReportResultRequest.update_uuid and failure_reason; JobProgress.detail.
inline constexpr size_t kMaxUpdateUuidBytes = 64;
inline constexpr size_t kMaxFailureReasonBytes = 8192;
inline constexpr size_t kMaxProgressDetailBytes = 256;

// --- Evidence (evidence_validator.h) ---
// Repeat samples of the duration.
inline constexpr int kMaxSamples = 1000;
// Metric groups, fields per group, field and group name lengths.
inline constexpr int kMaxMetricGroups = 16;
inline constexpr int kMaxMetricFields = 256;
inline constexpr size_t kMaxMetricFieldNameBytes = 128;
// Cores of one per-core table; slowest/fastest core lists.
inline constexpr int kMaxCores = 1024;
inline constexpr int kMaxCoreList = 16;
// Warnings, errors, missing groups, caveats, triggered families, argv.
inline constexpr int kMaxEvidenceListItems = 64;
// Each warning, error message, caveat and argv entry.
inline constexpr size_t kMaxEvidenceTextBytes = 4096;
// Short identity strings of the evidence (op type, shapes, versions, host,
// status texts...).
inline constexpr size_t kMaxEvidenceFieldBytes = 1024;
// evidence_json, summary_text, summary_markdown.
inline constexpr size_t kMaxEvidenceJsonBytes = 1 << 20;
inline constexpr size_t kMaxSummaryBytes = 256 << 10;
// The whole Evidence, serialized.
inline constexpr size_t kMaxEvidenceBytes = 3 << 20;

}  // namespace npuperf::server
