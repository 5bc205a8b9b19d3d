// A core header that includes a module above core: check_layers.cmake must refuse it.
#pragma once
#include "results/record.h"
