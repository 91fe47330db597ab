#include "sim/report_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/format.h"

namespace npuperf::sim {
namespace {

constexpr int64_t kTaskTimeLeadNs = 780;  // task_time starts this much before op_summary
constexpr int64_t kTaskTimeTailNs = 420;  // ... and stops this much after

// Shapes always arrive pre-quoted from msprof's parser; other cells only
// need quotes when they contain a comma.
std::string CellOrNa(const std::string& v, bool always_quote) {
  if (v.empty()) return "N/A";
  if (always_quote || v.find(',') != std::string::npos) return absl::StrCat("\"", v, "\"");
  return v;
}

int64_t DurationNs(double us) { return static_cast<int64_t>(std::llround(us * 1000.0)); }

}  // namespace

std::string MicrosFromNs(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

void ReportWriter::Stat::Add(double v) {
  min = count == 0 ? v : std::min(min, v);
  max = count == 0 ? v : std::max(max, v);
  ++count;
  sum += v;
  sum_sq += v * v;
}

ReportWriter::~ReportWriter() {
  if (op_summary_) std::fclose(op_summary_);
  if (task_time_) std::fclose(task_time_);
}

std::string ReportWriter::Path(const std::string& name) const {
  return (config_.output_dir / absl::StrCat(name, config_.table_suffix, ".csv")).string();
}

std::string ReportWriter::OpSummaryHeader() const {
  std::string block = config_.block_dim_naming || config_.torch_npu ? "Block Dim,Mix Block Dim"
                                                                    : "Block Num,Mix Block Num";
  // torch_npu's kernel_details: the op_summary columns under its own names, Step Id for Device_id.
  std::string h = absl::StrCat(
      config_.torch_npu
          ? "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start "
            "Time(us),Duration(us),Wait Time(us),"
          : "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start "
            "Time(us),Task Duration(us),Task Wait Time(us),",
      block,
      ",HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"
      "Output Formats,Context ID");
  for (const PmuColumn& c : config_.pmu) absl::StrAppend(&h, ",", c.name);
  return h;
}

absl::Status ReportWriter::Open(int64_t session_start_ns, int control_stream) {
  std::error_code ec;
  std::filesystem::create_directories(config_.output_dir, ec);
  if (WritesTaskFiles()) {
    op_summary_path_ = Path(config_.torch_npu ? "kernel_details" : "op_summary");
    op_summary_ = std::fopen(op_summary_path_.c_str(), "we");
    if (!op_summary_) return absl::InternalError(absl::StrCat("cannot write ", op_summary_path_));
    std::fprintf(op_summary_, "%s\n", OpSummaryHeader().c_str());
    if (config_.torch_npu) return absl::OkStatus();  // torch_npu writes no task_time
    task_time_path_ = Path("task_time");
    task_time_ = std::fopen(task_time_path_.c_str(), "we");
    if (!task_time_) return absl::InternalError(absl::StrCat("cannot write ", task_time_path_));
    std::fprintf(task_time_,
                 "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
                 "task_stop(us)\n");
    WriteTaskTimeRow("N/A", "PROFILING_ENABLE", control_stream, 0, session_start_ns, 0.020);
    WriteTaskTimeRow("N/A", "TASK_TIMEOUT_SET", control_stream, 1, session_start_ns + 40000,
                     93.980);
  }
  return absl::OkStatus();
}

void ReportWriter::WriteTaskTimeRow(const std::string& name, const std::string& type, int stream,
                                    int task, int64_t start_ns, double duration_us) {
  int64_t stop_ns = start_ns + DurationNs(duration_us);
  std::fprintf(task_time_, "%d,%s,%s,%d,%d,%s,%s\t,%s\t\n", config_.device, name.c_str(),
               type.c_str(), stream, task, Fixed((stop_ns - start_ns) / 1000.0, 3).c_str(),
               MicrosFromNs(start_ns).c_str(), MicrosFromNs(stop_ns).c_str());
}

void ReportWriter::AddTask(const TaskRecord& task) {
  const Launch& l = *task.launch;
  double duration = std::round(task.result->duration_us * 1000.0) / 1000.0;
  if (op_summary_ && l.pypto >= 0) {
    WritePyptoRows(task, duration);
  } else if (op_summary_) {
    WriteOpSummaryRow(task, task.start_ns, duration, -1);
  }
  if (task_time_) {
    int64_t start = task.start_ns - kTaskTimeLeadNs;
    double us = (DurationNs(duration) + kTaskTimeLeadNs + kTaskTimeTailNs) / 1000.0;
    WriteTaskTimeRow(
        KernelName(l),
        config_.cann9 ? Cann9TaskType(l.task_type) : std::string(TaskTypeName(l.task_type)),
        task.stream_id, task.task_id, start, us);
  }
  if (config_.options.task_time == TaskTimeLevel::kL1 && l.pypto < 0) {
    op_stats_[{l.op_type, std::string(TaskTypeName(l.task_type))}].Add(duration);
  }
}

void ReportWriter::WritePyptoRows(const TaskRecord& task, double duration_us) {
  const Launch& l = *task.launch;
  const int64_t total = DurationNs(duration_us);
  int64_t start = task.start_ns;
  for (int k = 0; k < kPyptoRows; ++k) {
    int64_t part = k + 1 < kPyptoRows ? total / kPyptoRows : total - (start - task.start_ns);
    double us = static_cast<double>(part) / 1000.0;
    WriteOpSummaryRow(task, start, us, k);
    if (config_.options.task_time == TaskTimeLevel::kL1) {
      op_stats_[{l.op_type, std::string(TaskTypeName(l.task_type))}].Add(us);
    }
    start += part;
  }
}

void ReportWriter::WriteBasicInfo(const Launch& l, int context, std::string& line) const {
  bool mix = l.task_type == TaskType::kMixAic || l.task_type == TaskType::kMixAiv;
  if (config_.options.task_time != TaskTimeLevel::kL1) {
    line += "0,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A";
    return;
  }
  absl::StrAppend(&line, l.block_num, ",", l.mix_block_num, ",", l.hf32, ",",
                  CellOrNa(l.in_shapes, true), ",", CellOrNa(l.in_dtypes, false), ",",
                  CellOrNa(l.in_formats, false), ",", CellOrNa(l.out_shapes, true), ",",
                  CellOrNa(l.out_dtypes, false), ",", CellOrNa(l.out_formats, false), ",");
  if (context >= 0) {
    absl::StrAppend(&line, context);
  } else {
    line += mix ? "0" : "N/A";
  }
}

void ReportWriter::WriteOpSummaryRow(const TaskRecord& task, int64_t start_ns, double duration_us,
                                     int context) {
  const Launch& l = *task.launch;
  bool l1 = config_.options.task_time == TaskTimeLevel::kL1;
  std::string wait = "0";
  if (rows_ > 0) {
    double gap = (start_ns - prev_start_ns_) / 1000.0 - prev_duration_us_;
    wait = Fixed(std::max(0.0, gap), 6);
  }
  line_.clear();
  // torch_npu: one profiler step (Step Id 1) where op_summary has the device.
  absl::StrAppend(&line_, config_.torch_npu ? 1 : config_.device, ",4294967295,", task.task_id, ",",
                  task.stream_id, ",", SummaryName(l), ",", l1 ? l.op_type : "N/A", ",",
                  l1 ? l.op_state : "N/A", ",", l1 ? TaskTypeName(l.task_type) : "N/A", ",",
                  MicrosFromNs(start_ns), "\t,", Fixed(duration_us, 3), ",", wait, ",");
  WriteBasicInfo(l, context, line_);
  if (!config_.pmu.empty()) {
    if (l.pypto >= 0) {  // PyPTO's rows carry no PMU figure
      for (size_t i = 0; i < config_.pmu.size(); ++i) line_ += ",N/A";
    } else if (l1) {
      AppendPmuCells(config_.pmu, *task.result, config_.rated_mhz, line_);
    } else if (config_.cann9) {
      Cann9Level0Cells(config_.pmu, *task.result, config_.rated_mhz, line_);
    } else {
      for (size_t i = 0; i < config_.pmu.size(); ++i) line_ += ",N/A";
    }
  }
  line_ += '\n';
  std::fwrite(line_.data(), 1, line_.size(), op_summary_);
  if (config_.garbage_row && rows_ == 0) {
    std::fputs("0,4294967295,###,GARBAGE,\x01\x02 not a row,,nan\n", op_summary_);
  }
  prev_start_ns_ = start_ns;
  prev_duration_us_ = duration_us;
  ++rows_;
}

std::string Cann9TaskType(TaskType type) {
  std::string name(TaskTypeName(type));
  if (name == "AI_CORE") return "KERNEL_AICORE";
  if (name == "AI_VECTOR_CORE") return "KERNEL_AIVEC";
  if (name == "MIX_AIC" || name == "MIX_AIV" || name == "AI_CPU") {
    return name == "AI_CPU" ? "KERNEL_AICPU" : "KERNEL_" + name;
  }
  return name;
}

void Cann9Level0Cells(const std::vector<PmuColumn>& columns, const KernelResult& k,
                      double rated_mhz, std::string& line) {
  for (const PmuColumn& c : columns) {
    std::string cell;
    AppendPmuCells({c}, k, rated_mhz, cell);
    bool time = absl::EndsWith(c.name, "time(us)") && cell != ",N/A";
    line += time ? ",0.0" : cell;
  }
}

void ReportWriter::AddApiCall(const std::string& level, const std::string& name,
                              double duration_us) {
  api_stats_[{level, name}].Add(duration_us);
}

absl::Status ReportWriter::WriteOpStatistic() {
  std::vector<std::pair<std::pair<std::string, std::string>, Stat>> rows(op_stats_.begin(),
                                                                         op_stats_.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.sum > b.second.sum; });
  double total = 0;
  for (const auto& r : rows) total += r.second.sum;
  std::ofstream out(Path("op_statistic"));
  const std::string device = config_.torch_npu ? "" : absl::StrCat(config_.device, ",");
  out << (config_.torch_npu ? "" : "Device_id,")
      << "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max "
         "Time(us),Ratio(%)\n";
  for (const auto& [key, s] : rows) {
    out << device << key.first << "," << key.second << "," << s.count << "," << Short3(s.sum) << ","
        << Short3(s.min) << "," << Short3(s.sum / s.count) << "," << Short3(s.max) << ","
        << Short3(total > 0 ? s.sum / total * 100 : 0) << "\n";
  }
  return out ? absl::OkStatus() : absl::InternalError("cannot write op_statistic");
}

absl::Status ReportWriter::WriteApiStatistic() {
  std::vector<std::pair<std::pair<std::string, std::string>, Stat>> rows(api_stats_.begin(),
                                                                         api_stats_.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.sum > b.second.sum; });
  std::ofstream out(Path("api_statistic"));
  out << (config_.torch_npu ? "" : "Device_id,")
      << "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n";
  for (const auto& [key, s] : rows) {
    double mean = s.sum / s.count;
    double var = std::max(0.0, s.sum_sq / s.count - mean * mean);
    out << (config_.torch_npu ? "" : "host,") << key.first << "," << key.second << ","
        << Short3(s.sum) << "," << s.count << "," << Short3(mean) << "," << Short3(s.min) << ","
        << Short3(s.max) << "," << Short3(var) << "\n";
  }
  return out ? absl::OkStatus() : absl::InternalError("cannot write api_statistic");
}

absl::Status ReportWriter::TruncateLastLine(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size < 4) return absl::OkStatus();
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t last = text.rfind('\n', text.size() - 2);
  size_t cut =
      last == std::string::npos ? text.size() / 2 : last + 1 + (text.size() - last - 1) / 2;
  std::filesystem::resize_file(path, cut, ec);
  return ec ? absl::InternalError(absl::StrCat("truncate ", path, ": ", ec.message()))
            : absl::OkStatus();
}

absl::Status ReportWriter::Finish() {
  for (FILE** f : {&op_summary_, &task_time_}) {
    if (*f && std::fclose(*f) != 0) return absl::InternalError("closing a CSV failed");
    *f = nullptr;
  }
  absl::Status s = absl::OkStatus();
  if (config_.options.task_time == TaskTimeLevel::kL1) s = WriteOpStatistic();
  if (s.ok() && config_.options.ascendcl) s = WriteApiStatistic();
  if (s.ok() && config_.truncate) {
    for (const std::string& p : {op_summary_path_, task_time_path_}) {
      if (!p.empty() && s.ok()) s = TruncateLastLine(p);
    }
  }
  return s;
}

}  // namespace npuperf::sim
