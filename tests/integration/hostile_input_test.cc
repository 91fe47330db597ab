// Hostile input through the real binaries (issue 13, "Limits on every input" and "Evidence
// validated at ingest"): each test asserts the refusal, that nothing was stored, and that the
// service still serves a normal collection afterwards.
#include <cmath>
#include <limits>

#include "common/status_util.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "npuperf/v1/agent_service.grpc.pb.h"
#include "npuperf/v1/collection_service.grpc.pb.h"
#include "npuperf/v1/query_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string Operator() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

void Prepare(grpc::ClientContext* ctx, seconds timeout = seconds(20)) {
  ctx->set_deadline(WallClock().SystemNow() + timeout);
}

// A quick collection through the CLI, waited for: the service still serves.
void ExpectANormalCollectionSucceeds(Cluster& c) {
  auto r = c.Cli({"--format", "json", "submit", "--quick", Operator(), "--op-name", kKernel,
                  "--warm-up", "0", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nserver log:\n" << c.server->Log();
  v1::Collection col;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out;
  EXPECT_EQ(col.state(), v1::COLLECTION_STATE_SUCCEEDED);
}

int CollectionsListed(Cluster& c) {
  auto list = c.Cli({"--format", "json", "list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  v1::ListCollectionsResponse resp;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(list.out, &resp).ok()) << list.out;
  return resp.collections_size();
}

// The spec of the one collection submitted so far (its bundle is uploaded).
v1::CollectionSpec FirstSpec(Cluster& c) {
  auto list = c.Cli({"--format", "json", "list"});
  v1::ListCollectionsResponse resp;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(list.out, &resp).ok()) << list.out;
  return resp.collections_size() > 0 ? resp.collections(0).spec() : v1::CollectionSpec();
}

absl::Status Submit(Cluster& c, const v1::CollectionSpec& spec) {
  auto stub = v1::CollectionService::NewStub(
      grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::SubmitCollectionRequest req;
  *req.mutable_spec() = spec;
  v1::SubmitCollectionResponse resp;
  return FromGrpcStatus(stub->SubmitCollection(&ctx, req, &resp));
}

std::string FirstField(const absl::Status& s) {
  auto fields = FieldViolationsOf(s);
  return fields.empty() ? "" : fields[0].field;
}

TEST(HostileInputTest, AnOversizedCollectionIsRefusedWhole) {
  Cluster c;
  c.Start("0-1");
  std::vector<std::string> args = {
      "submit", "--quick", Operator(), "--op-name", kKernel, "--case-arg=--case-id", "--no-wait"};
  for (int i = 0; i <= 10'000; ++i) {
    args.push_back("--case-id");
    args.push_back("c" + std::to_string(i));
  }
  auto r = c.Cli(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.operators: expands into 10001 jobs"), std::string::npos) << r.err;
  EXPECT_EQ(CollectionsListed(c), 0);
  ExpectANormalCollectionSucceeds(c);
}

TEST(HostileInputTest, ManifestPathTraversalAndReservedCaseEnvAreRefused) {
  Cluster c;
  c.Start("0-1");
  ExpectANormalCollectionSucceeds(c);  // uploads the bundle the hostile specs name
  const v1::CollectionSpec good = FirstSpec(c);
  ASSERT_EQ(good.operators_size(), 1);
  for (const char* path : {"../../../../etc/shadow", "/proc/self/environ", "a/../../x"}) {
    v1::CollectionSpec spec = good;
    spec.mutable_operators(0)->set_manifest_path(path);
    const absl::Status s = Submit(c, spec);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << path << ": " << s;
    EXPECT_EQ(FirstField(s), "spec.operators[0].manifest_path");
    EXPECT_EQ(s.message().find("shadow"), std::string::npos) << s;
    EXPECT_EQ(s.message().find(c.dir.path().string()), std::string::npos) << s;
  }
  auto r = c.Cli({"submit", "--quick", Operator(), "--op-name", kKernel, "--case-env", "LD_PRELOAD",
                  "--case-id", "p0", "--no-wait"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("spec.case_selector.case_env"), std::string::npos) << r.err;
  v1::CollectionSpec mask = good;
  mask.mutable_case_selector()->set_case_env("ASCEND_RT_VISIBLE_DEVICES");
  mask.mutable_operators(0)->add_case_ids("0,1");
  EXPECT_EQ(FirstField(Submit(c, mask)), "spec.case_selector.case_env");
  EXPECT_EQ(CollectionsListed(c), 1);  // only the normal one
  ExpectANormalCollectionSucceeds(c);
}

TEST(HostileInputTest, ForgedEvidenceIsRefusedAndTheJobFails) {
  Cluster c;
  c.Start("");  // no real agent: this test plays one
  auto r = c.Cli(
      {"--format", "json", "submit", "--quick", Operator(), "--op-name", kKernel, "--no-wait"});
  v1::Collection submitted;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &submitted).ok()) << r.err;
  auto agents =
      v1::AgentService::NewStub(grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials()));
  v1::RegisterAgentRequest reg;
  reg.set_host("forger");
  reg.set_boot_id("b");
  reg.set_instance_id("i");
  auto* dev = reg.add_devices();
  dev->set_device_id(0);
  dev->set_soc("Ascend910B2");
  v1::RegisterAgentResponse registered;
  grpc::ClientContext rctx;
  Prepare(&rctx);
  ASSERT_TRUE(agents->RegisterAgent(&rctx, reg, &registered).ok());
  v1::LeaseJobRequest lease;
  lease.set_agent_id(registered.agent_id());
  *lease.add_free_devices() = reg.devices(0);
  lease.set_wait_ms(5000);
  {  // asking for more jobs than any agent has devices leases nothing
    v1::LeaseJobRequest greedy = lease;
    greedy.set_max_assignments(std::numeric_limits<int32_t>::max());
    v1::LeaseJobResponse none;
    grpc::ClientContext gctx;
    Prepare(&gctx);
    const absl::Status g = FromGrpcStatus(agents->LeaseJob(&gctx, greedy, &none));
    ASSERT_TRUE(absl::IsInvalidArgument(g)) << g;
    EXPECT_EQ(FirstField(g), "max_assignments");
    EXPECT_FALSE(none.has_assignment());
  }
  v1::LeaseJobResponse leased;
  grpc::ClientContext lctx;
  Prepare(&lctx);
  ASSERT_TRUE(agents->LeaseJob(&lctx, lease, &leased).ok());
  ASSERT_TRUE(leased.has_assignment());
  v1::ReportResultRequest forged;
  forged.set_agent_id(registered.agent_id());
  forged.set_job_id(leased.assignment().job_id());
  forged.set_attempt(leased.assignment().attempt());
  forged.set_fencing_token(leased.assignment().fencing_token());
  forged.set_lease_secret(leased.assignment().lease_secret());  // the lease holder itself
  forged.set_update_uuid("u-forged");
  forged.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  auto* d = forged.mutable_evidence()->mutable_duration();
  d->add_samples_us(std::numeric_limits<double>::infinity());
  d->add_samples_us(-5);
  d->set_aggregate_us(std::numeric_limits<double>::quiet_NaN());
  (*forged.mutable_evidence()->mutable_bound()->mutable_ratios())["aiv_vec_ratio"] = 7.5;
  forged.mutable_evidence()->mutable_bound()->set_label("<script>");
  forged.mutable_evidence()->add_warnings(std::string(50 << 20, 'w'));
  v1::ReportResultResponse ack;
  grpc::ClientContext pctx;
  Prepare(&pctx);
  const absl::Status s = FromGrpcStatus(agents->ReportResult(&pctx, forged, &ack));
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(FirstField(s), "evidence");  // the whole message is over its size first
  auto failed = c.WaitFor(submitted.id(), Terminal, seconds(10));
  EXPECT_EQ(failed.state(), v1::COLLECTION_STATE_FAILED);
  ASSERT_EQ(failed.jobs_size(), 1);
  EXPECT_EQ(failed.jobs(0).reason().rfind("attempt 1 failed: evidence rejected: ", 0), 0u)
      << failed.jobs(0).reason();
  EXPECT_EQ(failed.jobs(0).round_id(), 0);
  auto rounds = c.Cli({"rounds", "--collection", submitted.id()});
  EXPECT_EQ(std::count(rounds.out.begin(), rounds.out.end(), '\n'), 1) << rounds.out;  // header
  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->find("npuperf_server_ingest_rejected_total 1"), std::string::npos);
  c.agent = c.StartAgent("1-2", "agent");
  ExpectANormalCollectionSucceeds(c);
}

// ---- Garbage to every RPC ----

// One call of `method` with `payload` as its only request message, through the generic stub
// (unary and streaming methods alike: one message, then half-close).
grpc::Status Call(grpc::GenericStub& stub, const std::string& method, const std::string& payload) {
  grpc::ClientContext ctx;
  Prepare(&ctx, seconds(3));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&ctx, method, &cq);
  void* tag = nullptr;
  bool ok = false;
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  call->Write(request, reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  call->WritesDone(reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  call->Read(&response, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  ctx.TryCancel();  // streams: one answer is enough
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

// A request of type d with every field set to a hostile value (depth-limited).
void Fill(google::protobuf::Message* m, int depth, int variant) {
  const auto* d = m->GetDescriptor();
  const auto* r = m->GetReflection();
  const std::string text = variant == 0   ? "abc:x"
                           : variant == 1 ? std::string(70'000, 'x')
                                          : std::string("../\x00\x1b", 5);
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->is_map() || f->is_repeated()) {
      if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
        r->AddString(m, f, text);
      }
      continue;
    }
    using FD = google::protobuf::FieldDescriptor;
    switch (f->cpp_type()) {
      case FD::CPPTYPE_STRING: r->SetString(m, f, text); break;
      case FD::CPPTYPE_INT32: r->SetInt32(m, f, variant == 0 ? -1 : INT32_MAX); break;
      case FD::CPPTYPE_INT64: r->SetInt64(m, f, variant == 0 ? -1 : INT64_MAX); break;
      case FD::CPPTYPE_DOUBLE: r->SetDouble(m, f, std::nan("")); break;
      case FD::CPPTYPE_BOOL: r->SetBool(m, f, true); break;
      case FD::CPPTYPE_ENUM: r->SetEnumValue(m, f, 99); break;
      case FD::CPPTYPE_MESSAGE:
        if (depth < 3) Fill(r->MutableMessage(m, f), depth + 1, variant);
        break;
      default: break;
    }
  }
}

TEST(HostileInputTest, GarbageToEveryRpcNeverEscapesAHandler) {
  Cluster c;
  c.Start("0-1");
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  int calls = 0;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const char* name :
       {"npuperf.v1.CollectionService", "npuperf.v1.QueryService", "npuperf.v1.AgentService"}) {
    const auto* service = pool->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      const auto* method = service->method(i);
      const std::string path = "/" + service->full_name() + "/" + method->name();
      std::vector<std::string> payloads = {"", std::string("\xff\xff\xff\xff\x0f", 5)};
      for (int variant = 0; variant < 3; ++variant) {
        std::unique_ptr<google::protobuf::Message> m(
            google::protobuf::MessageFactory::generated_factory()
                ->GetPrototype(method->input_type())
                ->New());
        Fill(m.get(), 0, variant);
        payloads.push_back(m->SerializeAsString());
      }
      for (const std::string& payload : payloads) {
        const grpc::Status s = Call(stub, path, payload);
        ++calls;
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNKNOWN) << path << ": " << s.error_message();
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE) << path << " took the server down";
      }
    }
  }
  EXPECT_GE(calls, 5 * 19);
  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->find("npuperf_server_handler_exceptions_total 0"), std::string::npos)
      << "an exception reached Serve";
  ExpectANormalCollectionSucceeds(c);
}

}  // namespace
}  // namespace npuperf::testing
