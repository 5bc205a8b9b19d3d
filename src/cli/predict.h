// What `predict` shares with `board --predict`: a case's spec-sheet forecast on a card, each model's
// census taken on this CPU once (cli/predict.cpp).
#pragma once
#include <map>
#include <string>

#include "predict/catalogue.h"
#include "predict/method.h"
#include "runner/case.h"

namespace trainbench::cli {

// The census of `c`'s model (its parameters, optimizer and layout), from `cache` or taken now and kept
// there. Throws what take_census throws.
const predict::StepCensus& census_of(const Case& c, std::map<std::string, predict::StepCensus>& cache);

// `c` on `card` from its spec sheet, with the built-in constants, TF32 off and the default GPU context.
predict::StepForecast forecast_case(const Case& c, const predict::DeviceSpec& card,
                                    std::map<std::string, predict::StepCensus>& cache);

}  // namespace trainbench::cli
