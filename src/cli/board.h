// `trainbench board`'s hook for predicted columns (cli/board.cpp).
#pragma once
#include <vector>

#include "board/board.h"
#include "predict/catalogue.h"

namespace trainbench::cli {

// What adds the board's predicted columns (`board --predict ID,...`): the LibTorch program sets it
// (cli/predict.cpp, predict_board_columns) before it dispatches, since a row's prediction builds its
// model to count the layers. Unset, as in the torch-free program, a board with --predict is handed over
// to the LibTorch program (kHandOver).
using BoardPredictor = void (*)(Board& board, const std::vector<predict::DeviceSpec>& cards);
void set_board_predictor(BoardPredictor p);

}  // namespace trainbench::cli
