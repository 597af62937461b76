#include "detcoll.h"
int dc_path_needs_reg(dc_op op, dc_path p) { (void)op; (void)p; return 0; }
