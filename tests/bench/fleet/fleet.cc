#include "tests/bench/fleet/fleet.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/keepalive.h"
#include "grpcpp/create_channel.h"
#include "tests/bench/fleet/reporter.h"
#include "tests/bench/fleet/virtual_agent.h"

namespace npuperf::fleet {
namespace {

// A channel on a connection of its own (distinct arguments: no shared
// subchannel), with the agent's keepalive settings (ServerChannel::Connect).
std::shared_ptr<grpc::Channel> OwnChannel(const std::string& address, int n) {
  grpc::ChannelArguments args;
  args.SetInt("npuperf.fleet.connection", n);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive::kClientKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive::kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace

Fleet::Fleet(FleetOptions options, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      log_(options_.agents * options_.devices_per_agent),
      reporter_(std::make_unique<Reporter>(clock, options_.reporters)) {}

Fleet::~Fleet() { Stop(); }

absl::Status Fleet::Start() {
  if (options_.servers.empty()) return absl::InvalidArgumentError("fleet: no server address");
  const int servers = static_cast<int>(options_.servers.size());
  // Connections per server: agents of one server share a connection in
  // groups of agents_per_connection.
  std::vector<std::vector<std::shared_ptr<grpc::Channel>>> channels(options_.servers.size());
  for (int i = 0; i < options_.agents; ++i) {
    auto& mine = channels[static_cast<size_t>(i % servers)];
    const int nth = i / servers;
    if (nth % std::max(1, options_.agents_per_connection) == 0) {
      mine.push_back(OwnChannel(options_.servers[static_cast<size_t>(i % servers)], i));
    }
    agents_.push_back(
        std::make_unique<VirtualAgent>(i, options_, mine.back(), clock_, log_, *reporter_));
  }
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (absl::Status s = agents_[i]->Register(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("fleet agent ", i, ": ", s.message()));
    }
  }
  for (auto& a : agents_) a->Start();
  return absl::OkStatus();
}

void Fleet::StopLeasing() {
  for (auto& a : agents_) a->StopLeasing();
}

bool Fleet::Drain(std::chrono::milliseconds timeout) {
  const Clock::MonotonicTime deadline = clock_.MonotonicNow() + timeout;
  while (log_.running() > 0 && clock_.MonotonicNow() < deadline) {
    clock_.SleepFor(std::chrono::milliseconds(50));
  }
  return log_.running() == 0;
}

void Fleet::Stop() {
  if (stopped_) return;
  stopped_ = true;
  StopLeasing();
  reporter_->Stop();  // before the agents its callbacks point at
  for (auto& a : agents_) a->Stop();
}

FleetErrors Fleet::errors() const {
  FleetErrors sum;
  for (const auto& a : agents_) {
    const FleetErrors e = a->errors();
    sum.lease_errors += e.lease_errors;
    sum.report_errors += e.report_errors;
    sum.progress_errors += e.progress_errors;
    sum.session_ends += e.session_ends;
    sum.kills += e.kills;
    sum.kills_running += e.kills_running;
    sum.cancels += e.cancels;
    sum.progress_in_heartbeats += e.progress_in_heartbeats;
    if (sum.first_error.empty()) sum.first_error = e.first_error;
  }
  return sum;
}

}  // namespace npuperf::fleet
