/* opts.c: the option spec's getopt table, parse loop and help text (opts.h). */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tune.h"

/* The most rows a spec may have (each gives up to two getopt rows). */
#define OPTS_MAX 64

/* The largest TUNE_OPT_SIZE. */
#define TUNE_OPT_SIZE_MAX (64ull << 30)

int tune_opts_int(const char *cmd, const tune_opt *o, const char *v, int64_t *x) {
  if (tune_parse_int(v, o->lo, o->hi, x) == tune_ok) return 0;
  return tune_usage_error(cmd, "--%s: '%s' is not a number in %" PRId64 "..%" PRId64, o->name, v, o->lo, o->hi);
}

static int opts_value(const char *cmd, const tune_opt *o, const char *v, void *out) {
  char *base = out;
  switch (o->kind) {
    case TUNE_OPT_FLAG: *(int *)(base + o->offset) = 1; return 0;
    case TUNE_OPT_STRING: *(const char **)(base + o->offset) = v; return 0;
    case TUNE_OPT_CHOICE: {
      size_t len = strlen(v);
      for (const char *w = o->choices; w && *w; w += strcspn(w, "|"), w += *w == '|')
        if (strcspn(w, "|") == len && strncmp(w, v, len) == 0) {
          *(const char **)(base + o->offset) = v;
          return 0;
        }
      char words[128];
      snprintf(words, sizeof(words), "%s", o->choices);
      char *bar = strrchr(words, '|');
      if (bar) *bar = '\0';
      for (char *p = strchr(words, '|'); p; p = strchr(p, '|')) *p = ',';
      return tune_usage_error(cmd, "--%s: '%s' is not %s%s%s", o->name, v, words, bar ? " or " : "",
                              bar ? bar + 1 : "");
    }
    case TUNE_OPT_INT: {
      int64_t x;
      int rc = tune_opts_int(cmd, o, v, &x);
      if (rc != 0) return rc;
      if (o->int_size == 4)
        *(int *)(base + o->offset) = (int)x;
      else
        *(int64_t *)(base + o->offset) = x;
      return 0;
    }
    case TUNE_OPT_DOUBLE: {
      char *end;
      errno = 0;
      double d = tune_strtod(v, &end);
      if (errno || end == v || *end || !(d >= o->dlo && d <= o->dhi))
        return tune_usage_error(cmd, "--%s: '%s' is not a number in %g..%g", o->name, v, o->dlo, o->dhi);
      *(double *)(base + o->offset) = d;
      return 0;
    }
    case TUNE_OPT_SIZE: {
      uint64_t b;
      if (tune_parse_size(v, &b) != tune_ok || b == 0 || b > TUNE_OPT_SIZE_MAX)
        return tune_usage_error(cmd, "--%s: '%s' is not a size in 1..64G", o->name, v);
      *(uint64_t *)(base + o->offset) = b;
      return 0;
    }
    case TUNE_OPT_TOLERANCE:
      if (tune_parse_tolerance(v, (double *)(base + o->offset)) == tune_ok) return 0;
      return tune_usage_error(cmd, "--%s: '%s' is not 3%%, 0.03 or 1.03 (between 0 and 100%%)", o->name, v);
    case TUNE_OPT_CALL: break;
  }
  return TUNE_EXIT_USAGE;
}

int tune_opts_parse(const char *cmd, const tune_opt *spec, size_t n, int argc, char **argv, void *out,
                    int in_order, const char *usage, const char *outro, int width, int *helped) {
  struct option table[2 * OPTS_MAX + 2];
  int seen[OPTS_MAX] = {0}, k = 0, c, rc, li = -1;
  *helped = 0;
  if (n > OPTS_MAX) return TUNE_EXIT_USAGE;
  for (size_t i = 0; i < n; i++) {
    int has = spec[i].arg == NULL ? no_argument : spec[i].optional ? optional_argument : required_argument;
    table[k++] = (struct option){spec[i].name, has, NULL, (int)i + 1};
    if (spec[i].alias) table[k++] = (struct option){spec[i].alias, has, NULL, (int)i + 1};
  }
  table[k++] = (struct option){"help", no_argument, NULL, 'h'};
  table[k] = (struct option){NULL, 0, NULL, 0};
  /* optind 0 starts getopt afresh (tests parse more than once). */
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, in_order ? "+:h" : ":h", table, &li)) != -1) {
    if (li >= 0) {
      /* getopt_long takes any unambiguous prefix (--gp for --gpus); tune,
       * like the ./tune script, takes options by their whole names. */
      const char *el = optarg != NULL && optarg == argv[optind - 1] ? argv[optind - 2] : argv[optind - 1];
      size_t len = strcspn(el + 2, "=");
      if (len != strlen(table[li].name) || strncmp(el + 2, table[li].name, len) != 0)
        return tune_usage_error(cmd, "unknown option '%.*s' (did you mean --%s?)", (int)len + 2, el,
                                table[li].name);
      li = -1;
    }
    if (c == 'h') {
      tune_opts_help(stdout, usage, spec, n, width, outro);
      *helped = 1;
      return 0;
    }
    if (c == ':') return tune_usage_error(cmd, "%s needs a value", argv[optind - 1]);
    if (c < 1 || c > (int)n) {
      /* getopt_long says '?' for a flag given a value (--hash=1) too. */
      const char *el = argv[optind - 1], *eq = strchr(el, '=');
      for (size_t i = 0; eq && !strncmp(el, "--", 2) && i < n; i++)
        if (spec[i].arg == NULL && strlen(spec[i].name) == (size_t)(eq - el - 2) &&
            !strncmp(el + 2, spec[i].name, (size_t)(eq - el - 2)))
          return tune_usage_error(cmd, "--%s takes no value ('%s')", spec[i].name, el);
      return tune_usage_error(cmd, "unknown option '%s'", el);
    }
    const tune_opt *o = &spec[c - 1];
    rc = o->kind == TUNE_OPT_CALL ? o->call(out, o, optarg, seen[c - 1], argc, argv)
                                  : opts_value(cmd, o, optarg, out);
    seen[c - 1]++;
    if (rc != 0) return rc;
  }
  return 0;
}

void tune_opts_help(FILE *f, const char *usage, const tune_opt *spec, size_t n, int width, const char *outro) {
  fputs(usage, f);
  for (size_t i = 0; i < n; i++) {
    char left[96];
    if (spec[i].help == NULL) continue; /* an old spelling, kept working */
    const char *h = spec[i].help;
    snprintf(left, sizeof(left), "--%s%s%s", spec[i].name, spec[i].arg && !spec[i].optional ? " " : "",
             spec[i].arg ? spec[i].arg : "");
    int w = fprintf(f, "  %s", left);
    for (int first = 1; h && *h; first = 0) {
      size_t len = strcspn(h, "\n");
      if (!first || w > width - 1) {
        fputc('\n', f);
        w = 0;
      }
      fprintf(f, "%*s%.*s", width - w, "", (int)len, h);
      w = width;
      h += len + (h[len] == '\n');
    }
    fputc('\n', f);
  }
  fprintf(f, "  %-*s%s\n", width - 2, "-h, --help", "this text");
  if (outro) fputs(outro, f);
}
