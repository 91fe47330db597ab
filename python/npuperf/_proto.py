"""The generated protobuf modules and the google.rpc error details.

``npuperf.v1.*_pb2`` and ``*_pb2_grpc`` are generated from ``proto/npuperf/v1`` by
the package build (python/setup.py runs grpc_tools.protoc); they are never
committed. ``google.rpc.Status`` and ``BadRequest`` come from a descriptor set the
same build writes (``_rpc_status.desc``), loaded into a private descriptor pool so
that they never clash with another package's copy of google/rpc/*.proto.
"""

from __future__ import annotations

import importlib.resources
from typing import List, Optional, Sequence, Tuple

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from npuperf.errors import FieldViolation

try:
    from npuperf.v1 import (  # noqa: F401  (re-exported)
        collection_pb2,
        collection_service_pb2,
        collection_service_pb2_grpc,
        comparison_pb2,
        device_service_pb2,
        device_service_pb2_grpc,
        evidence_pb2,
        query_service_pb2,
        query_service_pb2_grpc,
    )
except ImportError as e:  # pragma: no cover - a source checkout without the build step
    raise ImportError(
        "npuperf: the generated gRPC stubs (npuperf.v1) are missing: install the package "
        "with pip, which generates them from proto/ (docs/python.md)"
    ) from e

_BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


def _message_class(pool: descriptor_pool.DescriptorPool, name: str):
    descriptor = pool.FindMessageTypeByName(name)
    get_class = getattr(message_factory, "GetMessageClass", None)  # protobuf >= 4.22
    if get_class is not None:
        return get_class(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def _load_rpc_classes():
    data = importlib.resources.files("npuperf").joinpath("_rpc_status.desc").read_bytes()
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.AddSerializedFile(f.SerializeToString())
    return _message_class(pool, "google.rpc.Status"), _message_class(pool, "google.rpc.BadRequest")


_Status, _BadRequest = _load_rpc_classes()


def violations_of(metadata: Optional[Sequence[Tuple[str, object]]]) -> List[FieldViolation]:
    """Every BadRequest field violation in a call's trailing metadata."""
    out: List[FieldViolation] = []
    for key, value in metadata or ():
        if key != _STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = _Status.FromString(value)
        for detail in status.details:
            if detail.type_url == _BAD_REQUEST_TYPE:
                bad = _BadRequest.FromString(detail.value)
                out += [FieldViolation(v.field, v.description) for v in bad.field_violations]
    return out


def status_of(error: grpc.RpcError) -> Tuple[grpc.StatusCode, str, List[FieldViolation]]:
    """Code, message and field violations of a failed call."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    metadata = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    return code, details or "", violations_of(metadata)
