// What `predict` shares with `board --predict`: a case's spec-sheet forecast on a card, each model's
// census taken on this CPU once (cli/predict.cpp).
#pragma once
#include <map>
#include <string>

#include "board/board.h"
#include "predict/catalogue.h"
#include "predict/method.h"
#include "cases/case.h"
#include "results/results_file.h"

namespace trainbench::cli {

// The census of `c`'s model (its parameters, optimizer and layout), from `cache` or taken now and kept
// there. Throws what take_census throws.
const predict::StepCensus& census_of(const Case& c, std::map<std::string, predict::StepCensus>& cache);

// `c` on `card` from its spec sheet, with the built-in constants, TF32 off and the default GPU context.
predict::StepForecast forecast_case(const Case& c, const predict::DeviceSpec& card,
                                    std::map<std::string, predict::StepCensus>& cache);

// `board --predict`'s columns: each row's case forecast on each card from its spec sheet (a row whose
// case cannot be predicted is said on stderr and left empty). The board's predictor (cli/board.h).
void predict_board_columns(Board& board, const std::vector<predict::DeviceSpec>& cards);

// `predict`'s table of `out`'s predictions (cli/predict_print.cpp): `from_profile` when they were carried
// from a profile measured on `source_id`.
void print_predictions(const ResultsFile& out, bool from_profile, const std::string& source_id,
                       const predict::Constants& constants, int64_t context);

}  // namespace trainbench::cli
