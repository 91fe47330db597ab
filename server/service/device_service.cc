#include "server/service/device_service.h"

namespace npuperf::server {

DeviceServiceImpl::DeviceServiceImpl(DeviceHealth& health, Canaries& canaries, ServiceContext sc)
    : health_(health), canaries_(canaries), sc_(sc) {}

grpc::Status DeviceServiceImpl::ListQuarantines(grpc::ServerContext* ctx,
                                                const v1::ListQuarantinesRequest* req,
                                                v1::ListQuarantinesResponse* resp) {
  return ServeReply(sc_, "ListQuarantines", ctx, PrincipalKind::kTeam, resp,
                    [&](const Principal& p) { return health_.List(p, sc_.auth.required(), *req); });
}

grpc::Status DeviceServiceImpl::ReleaseDevice(grpc::ServerContext* ctx,
                                              const v1::ReleaseDeviceRequest* req,
                                              v1::ReleaseDeviceResponse* resp) {
  return ServeReply(sc_, "ReleaseDevice", ctx, PrincipalKind::kTeam, resp, [&](const Principal& p) {
    return health_.Release(p, sc_.auth.required(), *req);
  });
}

grpc::Status DeviceServiceImpl::ListCanaries(grpc::ServerContext* ctx,
                                             const v1::ListCanariesRequest* req,
                                             v1::ListCanariesResponse* resp) {
  return ServeReply(sc_, "ListCanaries", ctx, PrincipalKind::kTeam, resp, [&](const Principal& p) {
    return canaries_.List(health_.IsDeviceAdmin(p, sc_.auth.required()), *req);
  });
}

}  // namespace npuperf::server
