# DC_SANITIZERS: --enable-sanitizers builds the host C code with ASan and
# UBSan (any finding aborts the test that hit it). CPU only: nvcc is left
# out, so the option implies --without-cuda and refuses --with-cuda.
AC_DEFUN([DC_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers],
      [build host C code with -fsanitize=address,undefined (CPU only: implies --without-cuda)])],
    [], [enable_sanitizers=no])
  AS_IF([test "x$enable_sanitizers" = xyes], [
    AS_CASE([${with_cuda-no}],
      [no], [with_cuda=no],
      [AC_MSG_ERROR([--enable-sanitizers builds the CPU code only: drop --with-cuda (or pass --without-cuda)])])
    dc_san_flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    dc_save_CFLAGS=$CFLAGS; dc_save_LDFLAGS=$LDFLAGS
    CFLAGS="$CFLAGS $dc_san_flags"; LDFLAGS="$LDFLAGS $dc_san_flags"
    AC_MSG_CHECKING([whether $CC links with $dc_san_flags])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with $dc_san_flags])])
  ])
  AM_CONDITIONAL([SANITIZERS], [test "x$enable_sanitizers" = xyes])
])
