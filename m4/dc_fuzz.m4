# DC_CHECK_FUZZER: clang with libFuzzer (-fsanitize=fuzzer) builds the fuzz
# targets of tests/fuzz; without it (or in a CUDA build, whose libtune needs
# nvcc's objects) tests/fuzz.sh skips. CLANG names the compiler.
AC_DEFUN([DC_CHECK_FUZZER], [
  AC_ARG_VAR([CLANG], [clang with libFuzzer, for the fuzz targets (default: clang, clang-14..18)])
  AC_PATH_PROGS([CLANG], [clang clang-18 clang-17 clang-16 clang-15 clang-14], [no])
  dc_have_fuzzer=no
  AS_IF([test "x$CLANG" != xno && test "x$dc_have_cuda" = xno], [
    AC_MSG_CHECKING([whether $CLANG builds libFuzzer targets])
    cat >conftest_fuzz.c <<_DCEOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return (int)(n && d[[0]] == 1) - 1 + 1; }
_DCEOF
    AS_IF([$CLANG -fsanitize=fuzzer,address,undefined conftest_fuzz.c -o conftest_fuzz$EXEEXT >&AS_MESSAGE_LOG_FD 2>&1],
      [dc_have_fuzzer=yes])
    rm -f conftest_fuzz.c conftest_fuzz$EXEEXT
    AC_MSG_RESULT([$dc_have_fuzzer])
  ])
  AM_CONDITIONAL([HAVE_FUZZER], [test "x$dc_have_fuzzer" = xyes])
])
