# dc_deps.m4: optional dependencies of detcoll. Each sets dc_have_X=yes|no,
# an AM_CONDITIONAL HAVE_X, a HAVE_X define and X_CPPFLAGS/X_LDFLAGS/X_LIBS.
# --with-X (or --with-X=DIR) and missing: error. Not given and missing:
# warning. --without-X: left out.

# DC_CHECK_CUDA: nvcc, cuda_runtime.h and the static CUDA runtime.
AC_DEFUN([DC_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit (default: /usr/local/cuda if present)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCC], [CUDA compiler])
  AC_ARG_VAR([NVCC_GENCODE], [nvcc -gencode flags (default: sm_90, sm_100 and compute_100 PTX)])
  dc_have_cuda=no
  AS_IF([test "x$with_cuda" != xno], [
    AS_CASE([$with_cuda],
      [yes|check], [CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}],
      [CUDA_HOME=$with_cuda])
    AC_PATH_PROG([NVCC], [nvcc], [no], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])
    dc_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS -I$CUDA_HOME/include"
    AC_CHECK_HEADER([cuda_runtime_api.h], [dc_cuda_h=yes], [dc_cuda_h=no])
    CPPFLAGS=$dc_save_CPPFLAGS
    AS_IF([test "x$NVCC" != xno && test "x$dc_cuda_h" = xyes && test -f "$CUDA_HOME/lib64/libcudart_static.a"],
      [dc_have_cuda=yes])
  ])
  AS_IF([test "x$dc_have_cuda" = xno], [
    AS_CASE([$with_cuda],
      [no], [],
      [check], [AC_MSG_WARN([CUDA toolkit not found: libdetcoll and the GPU backend are left out (use --with-cuda=DIR)])],
      [AC_MSG_ERROR([--with-cuda given but nvcc, cuda_runtime_api.h or libcudart_static.a not found under $CUDA_HOME])])
  ])
  AS_IF([test "x$dc_have_cuda" = xyes], [
    CUDA_CPPFLAGS="-I$CUDA_HOME/include"
    CUDA_LDFLAGS="-L$CUDA_HOME/lib64"
    CUDA_LIBS="-lcudart_static -ldl -lpthread -lrt"
    AS_IF([test -z "$NVCC_GENCODE"],
      [NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100 -gencode=arch=compute_100,code=compute_100"])
    AC_DEFINE([HAVE_CUDA], [1], [CUDA toolkit available])
  ])
  AC_ARG_WITH([dispatch-skew-us],
    [AS_HELP_STRING([--with-dispatch-skew-us=D],
      [auto dispatch uses the threshold rows tuned under D us of rank skew (default 0: the zero-skew rows)])],
    [AS_CASE([$withval], [''|*@<:@!0-9@:>@*], [AC_MSG_ERROR([--with-dispatch-skew-us needs a whole number of microseconds, not '$withval'])])
     DC_DISPATCH_FLAGS="-DDC_DISPATCH_SKEW_NS=${withval}000"],
    [DC_DISPATCH_FLAGS=])
  AC_SUBST([DC_DISPATCH_FLAGS])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([NVCC_GENCODE])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$dc_have_cuda" = xyes])
])

# DC_CHECK_NCCL: nccl.h and libnccl (needs CUDA).
AC_DEFUN([DC_CHECK_NCCL], [
  AC_ARG_WITH([nccl],
    [AS_HELP_STRING([--with-nccl=DIR], [NCCL install prefix (default: CUDA dir, then system)])],
    [], [with_nccl=check])
  dc_have_nccl=no
  AS_IF([test "x$with_nccl" != xno && test "x$dc_have_cuda" = xyes], [
    AS_CASE([$with_nccl],
      [yes|check], [dc_nccl_dirs="$CUDA_HOME /usr"],
      [dc_nccl_dirs=$with_nccl])
    for dc_d in $dc_nccl_dirs; do
      dnl The header must be in this prefix: the CUDA include path alone
      dnl could otherwise satisfy the check for any --with-nccl=DIR.
      test -f "$dc_d/include/nccl.h" || continue
      dc_save_CPPFLAGS=$CPPFLAGS; dc_save_LIBS=$LIBS; dc_save_LDFLAGS=$LDFLAGS
      CPPFLAGS="-I$dc_d/include $CPPFLAGS $CUDA_CPPFLAGS"
      LDFLAGS="$LDFLAGS -L$dc_d/lib64 -L$dc_d/lib -L$dc_d/lib/x86_64-linux-gnu"
      LIBS="-lnccl $LIBS"
      AC_MSG_CHECKING([for NCCL in $dc_d])
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>]], [[int v; ncclGetVersion(&v);]])],
        [dc_have_nccl=yes; NCCL_CPPFLAGS="-I$dc_d/include"; NCCL_LDFLAGS="-L$dc_d/lib64 -L$dc_d/lib"; NCCL_LIBS=-lnccl])
      AC_MSG_RESULT([$dc_have_nccl])
      CPPFLAGS=$dc_save_CPPFLAGS; LIBS=$dc_save_LIBS; LDFLAGS=$dc_save_LDFLAGS
      AS_IF([test "x$dc_have_nccl" = xyes], [break])
    done
  ])
  AS_IF([test "x$dc_have_nccl" = xno], [
    AS_CASE([$with_nccl],
      [no], [],
      [check], [AC_MSG_WARN([NCCL not found (or no CUDA): the NCCL baseline is left out])],
      [AC_MSG_ERROR([--with-nccl given but NCCL (nccl.h, libnccl) was not found, or CUDA is missing])])
  ], [AC_DEFINE([HAVE_NCCL], [1], [NCCL available])])
  AC_SUBST([NCCL_CPPFLAGS])
  AC_SUBST([NCCL_LDFLAGS])
  AC_SUBST([NCCL_LIBS])
  AM_CONDITIONAL([HAVE_NCCL], [test "x$dc_have_nccl" = xyes])
])

# DC_CHECK_MPI: Open MPI through pkg-config (ompi-c), else mpicc --showme;
# --with-mpi=DIR: that prefix's bin/mpicc --showme and bin/mpirun, nothing
# found elsewhere (a system Open MPI must not stand in for the one named).
AC_DEFUN([DC_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi@<:@=DIR@:>@], [build the MPI launcher (Open MPI; DIR: its install prefix)])],
    [], [with_mpi=check])
  dc_have_mpi=no
  AS_CASE([$with_mpi], [no|yes|check], [dc_mpi_path=$PATH], [dc_mpi_path=$with_mpi/bin])
  AS_IF([test "x$with_mpi" != xno], [
    AS_CASE([$with_mpi], [yes|check], [PKG_CHECK_MODULES([MPI], [ompi-c], [dc_have_mpi=yes], [:])])
    AS_IF([test "x$dc_have_mpi" = xno], [
      AC_PATH_PROG([MPICC], [mpicc], [no], [$dc_mpi_path])
      AS_IF([test "x$MPICC" != xno], [
        MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
        MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
        AS_IF([test -n "$MPI_LIBS"], [dc_have_mpi=yes])
      ])
    ])
  ])
  AS_IF([test "x$dc_have_mpi" = xno], [
    AS_CASE([$with_mpi],
      [no], [],
      [check], [AC_MSG_WARN([Open MPI not found: the MPI launcher is left out])],
      [yes], [AC_MSG_ERROR([--with-mpi given but Open MPI (ompi-c or mpicc) was not found])],
      [AC_MSG_ERROR([--with-mpi=$with_mpi given but $with_mpi/bin/mpicc (Open MPI) was not found or gave no --showme:link])])
  ], [AC_DEFINE([HAVE_MPI], [1], [MPI available])])
  AC_PATH_PROG([MPIRUN], [mpirun], [mpirun], [$dc_mpi_path])
  AC_DEFINE_UNQUOTED([TUNE_MPIRUN], ["$MPIRUN"], [mpirun program])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AM_CONDITIONAL([HAVE_MPI], [test "x$dc_have_mpi" = xyes])
])

# DC_CHECK_HWLOC: hwloc >= 2 through pkg-config; --with-hwloc=DIR: only
# DIR's hwloc.pc (DIR/lib/pkgconfig, DIR/lib64/pkgconfig), not the system's.
AC_DEFUN([DC_CHECK_HWLOC], [
  AC_ARG_WITH([hwloc],
    [AS_HELP_STRING([--with-hwloc@<:@=DIR@:>@], [pin rank threads to GPU-local cores with hwloc (DIR: its install prefix)])],
    [], [with_hwloc=check])
  dc_have_hwloc=no
  AS_IF([test "x$with_hwloc" != xno], [
    dc_save_PKG_CONFIG=$PKG_CONFIG
    AS_CASE([$with_hwloc], [yes|check], [],
      [PKG_CONFIG="env PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$with_hwloc/lib/pkgconfig:$with_hwloc/lib64/pkgconfig $PKG_CONFIG"])
    PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [dc_have_hwloc=yes], [:])
    PKG_CONFIG=$dc_save_PKG_CONFIG
  ])
  AS_IF([test "x$dc_have_hwloc" = xno], [
    AS_CASE([$with_hwloc],
      [no], [],
      [check], [AC_MSG_WARN([hwloc not found: rank threads are not pinned])],
      [yes], [AC_MSG_ERROR([--with-hwloc given but hwloc >= 2.0 was not found])],
      [AC_MSG_ERROR([--with-hwloc=$with_hwloc given but no hwloc >= 2.0 (hwloc.pc) was found under $with_hwloc/lib/pkgconfig or $with_hwloc/lib64/pkgconfig])])
  ], [AC_DEFINE([HAVE_HWLOC], [1], [hwloc available])])
  AM_CONDITIONAL([HAVE_HWLOC], [test "x$dc_have_hwloc" = xyes])
])
