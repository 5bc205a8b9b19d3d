// Umbrella header: every model family of the zoo, and the registry that names them.
#pragma once
#include "models/alexnet.h"
#include "models/densenet.h"
#include "models/googlenet.h"
#include "models/inception.h"
#include "models/layers.h"
#include "models/mobilenet.h"
#include "models/registry.h"
#include "models/resnet.h"
#include "models/vgg.h"
