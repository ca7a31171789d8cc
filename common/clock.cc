#include "common/clock.h"
