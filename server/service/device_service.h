#pragma once

#include "npuperf/v1/device_service.grpc.pb.h"
#include "server/compare/canaries.h"
#include "server/core/device_health.h"
#include "server/service/serve.h"

namespace npuperf::server {

// DeviceService (docs/api.md, docs/operations.md "Device health"): the
// quarantines and a person's release (DeviceHealth's) and the canaries
// (Canaries'), each through Serve. Team tokens only; thread-safe; health
// and canaries outlive it.
class DeviceServiceImpl final : public v1::DeviceService::Service {
 public:
  DeviceServiceImpl(DeviceHealth& health, Canaries& canaries, ServiceContext sc);

  grpc::Status ListQuarantines(grpc::ServerContext* ctx, const v1::ListQuarantinesRequest* req,
                               v1::ListQuarantinesResponse* resp) override;
  grpc::Status ReleaseDevice(grpc::ServerContext* ctx, const v1::ReleaseDeviceRequest* req,
                             v1::ReleaseDeviceResponse* resp) override;
  grpc::Status ListCanaries(grpc::ServerContext* ctx, const v1::ListCanariesRequest* req,
                            v1::ListCanariesResponse* resp) override;

 private:
  DeviceHealth& health_;
  Canaries& canaries_;
  ServiceContext sc_;
};

}  // namespace npuperf::server
