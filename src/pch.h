// Precompiled header: <torch/torch.h> costs most of every translation unit's compile time.
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>
