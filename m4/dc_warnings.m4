# AX_COMPILER_WARNINGS: -Wall -Wextra always; --enable-werror (CI) adds -Werror.
AC_DEFUN([AX_COMPILER_WARNINGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [], [enable_werror=no])
  WARN_CFLAGS="-Wall -Wextra"
  AS_IF([test "x$enable_werror" = xyes], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])
  AC_SUBST([WARN_CFLAGS])
])
