// The roofline of an Evidence record and its JSON (roofline.h).
#include "evidence/evidence.h"
#include "evidence/roofline.h"
#include "evidence/roofline_json.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {

using internal::Cat;

void ApplyRoofline(Evidence* ev, const std::optional<TileDagAttestation>& attestation) {
  RooflineInputs in;
  in.merged = ev->merged;
  in.per_block_averages = ev->input.kind == "opprof";
  in.blocks = static_cast<double>(ev->block_num);
  if (ev->duration.aggregate_us > 0) {
    in.duration_us = ev->duration.aggregate_us;
    in.duration_source =
        Cat("Task Duration, ", NameOf(ev->duration.method), " of ", ev->duration.samples_us.size(),
            " sample(s) (", NameOf(ev->duration.source), ")");
  } else if (ev->task_duration_us > 0) {
    in.duration_us = ev->task_duration_us;
    in.duration_source = "op_summary Task Duration of the canonical row";
  }
  in.soc = ev->dvfs.soc;
  in.rated_mhz = ev->dvfs.rated_mhz;
  in.scalar_dominant = ev->bound.scalar_route_triggered;
  in.attestation = attestation;
  ev->roofline = ComputeRoofline(in);
  if (!in.soc.empty()) ev->roofline.sources["soc"] = Cat(in.soc, " (", ev->dvfs.rated_source, ")");
}

nlohmann::ordered_json RooflineToJson(const Roofline& r) {
  using Json = nlohmann::ordered_json;
  Json attestation = nullptr;
  if (r.attestation) {
    attestation = {{"path", r.attestation->path.string()},
                   {"sha256", r.attestation->sha256},
                   {"status", r.attestation->status},
                   {"tile_dag", r.attestation->tile_dag}};
  }
  Json scalar = r.scalar_dominant ? Json(*r.scalar_dominant) : Json(nullptr);
  return Json{{"status", r.status},
              {"missing", r.missing},
              {"notes", r.notes},
              {"ops", r.ops},
              {"cube_ops", r.cube_ops},
              {"vector_ops", r.vector_ops},
              {"bytes", r.bytes},
              {"read_bytes", r.read_bytes},
              {"write_bytes", r.write_bytes},
              {"duration_us", r.duration_us},
              {"compute_ceiling", r.compute_ceiling},
              {"peak_ops_per_s", r.peak_ops_per_s},
              {"peak_bytes_per_s", r.peak_bytes_per_s},
              {"arithmetic_intensity", r.arithmetic_intensity},
              {"achieved_ops_per_s", r.achieved_ops_per_s},
              {"achieved_bytes_per_s", r.achieved_bytes_per_s},
              {"ridge_point", r.ridge_point},
              {"roof_ops_per_s", r.roof_ops_per_s},
              {"percent_of_roof", r.percent_of_roof},
              {"compute_utilization_pct", r.compute_utilization_pct},
              {"bandwidth_utilization_pct", r.bandwidth_utilization_pct},
              {"binding_ceiling", r.binding_ceiling},
              {"sources", r.sources},
              {"roofline_terminal_status", r.terminal_status},
              {"terminal_rule", std::string(TerminalRule())},
              {"scalar_dominant", std::move(scalar)},
              {"pipeline_overlap_status", r.pipeline_status},
              {"tile_dag_attestation", std::move(attestation)},
              {"completion_eligible", r.completion_eligible},
              {"completion_blockers", r.completion_blockers}};
}

}  // namespace npuperf::evidence
