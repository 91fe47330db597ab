#pragma once

#include "npuperf/v1/device_service.grpc.pb.h"
#include "server/core/device_health.h"
#include "server/service/serve.h"

namespace npuperf::server {

// DeviceService (docs/api.md, docs/operations.md "Device health"): the
// quarantines and a person's release, both DeviceHealth's, each through
// Serve. Team tokens only; thread-safe; health outlives it.
class DeviceServiceImpl final : public v1::DeviceService::Service {
 public:
  DeviceServiceImpl(DeviceHealth& health, ServiceContext sc);

  grpc::Status ListQuarantines(grpc::ServerContext* ctx, const v1::ListQuarantinesRequest* req,
                               v1::ListQuarantinesResponse* resp) override;
  grpc::Status ReleaseDevice(grpc::ServerContext* ctx, const v1::ReleaseDeviceRequest* req,
                             v1::ReleaseDeviceResponse* resp) override;

 private:
  DeviceHealth& health_;
  ServiceContext sc_;
};

}  // namespace npuperf::server
