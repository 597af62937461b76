# kernels/local.mk: libdetcoll (CUDA C, compiled by nvcc under libtool).
include_HEADERS = kernels/dc_table.h
EXTRA_DIST += kernels/detcoll.pc.in
