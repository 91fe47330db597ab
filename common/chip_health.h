#pragma once
// What a chip reading (npu-smi, evidence.proto DeviceReading) means, shared
// by the agent, which withdraws a critical device and records readings with
// every round, and the server, which quarantines it (docs/operations.md,
// "Device health"). Pure; thread-safe.
#include <string>
#include <string_view>

#include "npuperf/v1/evidence.pb.h"

namespace npuperf {

// How npu-smi rates a chip. kCritical covers "Alarm" (a major alarm) and
// "Critical": either withdraws the device (never offered; the server
// quarantines it). kWarning ("Warning", a minor alarm) is recorded with the
// round. kUnknown: not read, or a status npuperf does not know.
enum class ChipHealth { kOk, kWarning, kCritical, kUnknown };

// The health of a "Health Status" value (case-insensitive).
ChipHealth ClassifyHealth(std::string_view status);

// "npu-smi: Health Status Critical (error code 80CB8002)" for a reading that
// withdraws the device, else "".
std::string CriticalReason(const v1::DeviceReading& reading);

// A clock that reads below 95 % of the rated one (the down-clock line users
// of msprof-analyze's frequency analysis apply); false when either is unknown.
bool ClockLow(const v1::DeviceReading& reading);

}  // namespace npuperf
