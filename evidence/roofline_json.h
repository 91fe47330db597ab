#pragma once

#include <nlohmann/json.hpp>

#include "evidence/roofline.h"

namespace npuperf::evidence {

// evidence.json's "roofline" object (docs/evidence.md "Roofline").
nlohmann::ordered_json RooflineToJson(const Roofline& r);

}  // namespace npuperf::evidence
