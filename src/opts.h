/* opts.h: one option spec for every subcommand. Each option is a row --
 * name, another spelling, kind, range, where its value goes, help -- and
 * the getopt table, the parse loop, the range messages and the help text
 * are all made from the rows, so an option has the same name, range and
 * message in every command that has it. Common floor. */
#ifndef TUNE_OPTS_H
#define TUNE_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
  TUNE_OPT_FLAG,   /* no value: the int at offset becomes 1 */
  TUNE_OPT_INT,    /* an integer in lo..hi into an int (int_size 4) or int64_t (8) at offset */
  TUNE_OPT_DOUBLE, /* a number in dlo..dhi into the double at offset */
  TUNE_OPT_STRING, /* the value (argv's own string) into the const char * at offset */
  TUNE_OPT_CHOICE, /* TUNE_OPT_STRING, one of the words of choices ("gpu|sim") */
  TUNE_OPT_SIZE,   /* a byte size in 1..64G (K, M, G suffixes) into the uint64_t at offset */
  TUNE_OPT_TOLERANCE, /* "3%", "0.03" or "1.03" as a fraction (0.03) into the double at offset */
  TUNE_OPT_CALL    /* the value handed to call */
} tune_opt_kind;

typedef struct tune_opt tune_opt;

/* A TUNE_OPT_CALL handler: out is the command's options, value the
 * option's value (NULL for a flag, or an optional value not given); seen
 * counts earlier occurrences of the option. argc and argv let a
 * multi-valued option take the words after it (advancing optind). Returns
 * 0 or a usage error status (tune_usage_error). */
typedef int (*tune_opt_fn)(void *out, const tune_opt *o, const char *value, int seen, int argc, char **argv);

struct tune_opt {
  const char *name;  /* the long option, without "--" */
  const char *alias; /* another spelling of it, or NULL */
  tune_opt_kind kind;
  const char *arg;   /* the value's name in the help ("N", "FILE"); NULL: no value */
  int optional;      /* 1: the value is optional (--name=VALUE only) */
  int64_t lo, hi;    /* TUNE_OPT_INT */
  double dlo, dhi;   /* TUNE_OPT_DOUBLE */
  size_t offset;     /* FLAG, INT, DOUBLE, STRING: the field in the options */
  int int_size;      /* TUNE_OPT_INT: 4 or 8 */
  tune_opt_fn call;  /* TUNE_OPT_CALL */
  const char *help;  /* the help text; "\n" starts a continuation line; NULL:
                        left out of the help (an old spelling) */
  const char *choices; /* TUNE_OPT_CHOICE: the words, separated by '|' */
};

/* Rows for the common kinds. */
#define TUNE_OPT_FLAG_ROW(n, type, field, h) \
  {.name = n, .kind = TUNE_OPT_FLAG, .offset = offsetof(type, field), .help = h}
#define TUNE_OPT_INT_ROW(n, al, a, type, field, l, u, h)                                                 \
  {.name = n, .alias = al, .kind = TUNE_OPT_INT, .arg = a, .lo = l, .hi = u, .offset = offsetof(type, field), \
   .int_size = (int)sizeof(((type *)0)->field), .help = h}
#define TUNE_OPT_DOUBLE_ROW(n, a, type, field, l, u, h) \
  {.name = n, .kind = TUNE_OPT_DOUBLE, .arg = a, .dlo = l, .dhi = u, .offset = offsetof(type, field), .help = h}
#define TUNE_OPT_STRING_ROW(n, al, a, type, field, h) \
  {.name = n, .alias = al, .kind = TUNE_OPT_STRING, .arg = a, .offset = offsetof(type, field), .help = h}
#define TUNE_OPT_CHOICE_ROW(n, a, type, field, words, h) \
  {.name = n, .kind = TUNE_OPT_CHOICE, .arg = a, .offset = offsetof(type, field), .help = h, .choices = words}
#define TUNE_OPT_SIZE_ROW(n, type, field, h) \
  {.name = n, .kind = TUNE_OPT_SIZE, .arg = "SIZE", .offset = offsetof(type, field), .help = h}
#define TUNE_OPT_TOLERANCE_ROW(type, field, h) \
  {.name = "tolerance", .kind = TUNE_OPT_TOLERANCE, .arg = "T", .offset = offsetof(type, field), .help = h}
#define TUNE_OPT_CALL_ROW(n, al, a, fn, h) {.name = n, .alias = al, .kind = TUNE_OPT_CALL, .arg = a, .call = fn, .help = h}

/* Parse the options of `cmd` (for messages) in argv against spec[0..n)
 * into out. -h and --help print help (tune_opts_help) to stdout and set
 * *helped. in_order: stop at the first non-option (multi-valued options
 * take the words after them). Returns 0 with optind at the first operand,
 * or a usage error status. */
int tune_opts_parse(const char *cmd, const tune_opt *spec, size_t n, int argc, char **argv, void *out,
                    int in_order, const char *usage, const char *outro, int width, int *helped);

/* For a TUNE_OPT_CALL handler: value as an integer in o->lo..o->hi, with
 * the message every integer option gives. */
int tune_opts_int(const char *cmd, const tune_opt *o, const char *value, int64_t *x);

/* The help text: usage, then one line per option (name, value, help,
 * continuation lines indented to width), "-h, --help", then outro. */
void tune_opts_help(FILE *f, const char *usage, const tune_opt *spec, size_t n, int width, const char *outro);

#endif /* TUNE_OPTS_H */
