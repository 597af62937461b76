/* bench_opts.c: the command line of bench_detcoll (bench_opts.h): one table
 * of options, nccl-tests' -b/-e/-f/-g among them. */
#include "bench_opts.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_file.h"
#include "tune.h"

/* One option: parse(o, value) returns NULL or what is wrong with value.
 * Integer options without a parser store into the int at off, within
 * [min, max]. arg NULL: a flag (parse gets NULL). */
typedef struct {
  const char *name, *short_name, *arg, *help;
  const char *(*parse)(bench_opts *o, const char *v);
  size_t off;
  long min, max;
} bench_opt;

/* Whole bytes, as tune reads them (src/size.c), within 1 byte .. 64G. */
static const char *parse_size(const char *s, size_t *out) {
  uint64_t v;
  if (tune_parse_size(s, &v) != tune_ok)
    return "not a size (digits with an optional K, M or G, or KiB, MiB, GiB)";
  if (v < 1 || v > (64ull << 30)) return "out of range (1 byte .. 64G)";
  *out = (size_t)v;
  return NULL;
}

static const char *opt_op(bench_opts *o, const char *v) {
  o->op = !strcmp(v, "all") ? -1 : dc_op_parse(v);
  return o->op >= -1 && (o->op >= 0 || !strcmp(v, "all"))
             ? NULL
             : "not all_gather, all_reduce, reduce_scatter or all";
}

/* detcoll's dtype names, or nccl-tests' -d names of the same types. */
static const char *opt_dtype(bench_opts *o, const char *v) {
  static const struct {
    const char *name;
    dc_dtype dtype;
  } nccl_names[] = {{"bfloat16", DC_DTYPE_BF16}, {"half", DC_DTYPE_FP16}, {"float", DC_DTYPE_FP32}};
  int d = dc_dtype_parse(v);
  for (size_t i = 0; d < 0 && i < sizeof(nccl_names) / sizeof(nccl_names[0]); i++)
    if (!strcmp(v, nccl_names[i].name)) d = (int)nccl_names[i].dtype;
  o->dtype = (dc_dtype)d;
  return d < 0 ? "not bf16, fp16 or fp32 (nccl-tests: bfloat16, half or float)" : NULL;
}

static const char *opt_mode(bench_opts *o, const char *v) {
  o->eager = !strcmp(v, "eager") || !strcmp(v, "both");
  o->graph = !strcmp(v, "graph") || !strcmp(v, "both");
  return o->eager || o->graph ? NULL : "not eager, graph or both";
}

/* item(o, t) for each comma-separated item t of v, in order, until one
 * is wrong; an empty item is wrong too. */
static const char *each_item(bench_opts *o, const char *v,
                             const char *(*item)(bench_opts *o, const char *t)) {
  const char *err = NULL;
  char *dup = strdup(v);
  if (!dup) return "out of memory";
  for (char *t = dup, *next; t && !err; t = next) {
    if ((next = strchr(t, ',')) != NULL) *next++ = '\0';
    err = *t ? item(o, t) : "an empty item";
  }
  free(dup);
  return err;
}

static const char *size_item(bench_opts *o, const char *t) {
  size_t b;
  const char *err = parse_size(t, &b);
  if (err) return err;
  for (int i = 0; i < o->nsizes; i++)
    if (o->sizes[i] == b) return "a size given twice";
  if (o->nsizes == BENCH_MAX_SIZES) return "more than 64 sizes";
  o->sizes[o->nsizes++] = b;
  return NULL;
}

static const char *opt_sizes(bench_opts *o, const char *v) {
  o->sizes_given = 1;
  return each_item(o, v, size_item);
}

static const char *opt_begin(bench_opts *o, const char *v) {
  o->range_given = 1;
  return parse_size(v, &o->begin_bytes);
}

static const char *opt_end(bench_opts *o, const char *v) {
  o->range_given = 1;
  return parse_size(v, &o->end_bytes);
}

static const char *opt_factor(bench_opts *o, const char *v) {
  char *end;
  long f = strtol(v, &end, 10);
  o->range_given = 1;
  if (end == v || *end != '\0') return "not an integer";
  if (f < 2 || f > 1024) return "out of range (2..1024)";
  o->factor = (int)f;
  return NULL;
}

/* *set |= bit, unless it is in already (an item given twice). */
static const char *add_bit(unsigned *set, unsigned bit) {
  if (*set & bit) return "an item given twice";
  *set |= bit;
  return NULL;
}

static const char *impl_item(bench_opts *o, const char *t) {
  static const char *const names[] = {
      [BENCH_DETCOLL] = "detcoll", [BENCH_NCCL] = "nccl", [BENCH_NCCL_SYMM] = "nccl_symm"};
  for (int i = 0; i < BENCH_FLOOR; i++)
    if (!strcmp(t, names[i])) return add_bit(&o->impls, 1u << i);
  return "not a list of detcoll, nccl, nccl_symm";
}

static const char *opt_impl(bench_opts *o, const char *v) {
  o->impls = 0;
  return each_item(o, v, impl_item);
}

static const char *path_item(bench_opts *o, const char *t) {
  int p = dc_path_parse(t);
  if (o->paths == ~0u || (o->paths && !strcmp(t, "all"))) return "all goes alone";
  if (!strcmp(t, "all")) {
    o->paths = ~0u;
    return NULL;
  }
  if (!strcmp(t, "auto_reg")) return add_bit(&o->paths, 1u << BENCH_AUTO_REG);
  if (p >= 0) return add_bit(&o->paths, 1u << p);
  return "not a list of auto, auto_reg, detcoll path names (single_block, one_shot, direct, ...) "
         "or all";
}

static const char *opt_paths(bench_opts *o, const char *v) {
  o->paths = 0;
  return each_item(o, v, path_item);
}

static const char *opt_p2p(bench_opts *o, const char *v) {
  (void)v;
  o->p2p = 1;
  return NULL;
}

static const char *opt_p2p_size(bench_opts *o, const char *v) {
  const char *err = parse_size(v, &o->p2p_bytes);
  return err ? err : o->p2p_bytes % 16 ? "not a multiple of 16 bytes" : NULL;
}

/* A file that can be written: not a folder; writable where it is there,
 * else in a folder that takes files (written only once a GPU was found). */
static const char *opt_out(bench_opts *o, const char *v) {
  struct stat sb;
  const char *slash = strrchr(v, '/');
  char dir[4096];
  if (!*v) return "an empty path";
  if (stat(v, &sb) == 0 && S_ISDIR(sb.st_mode)) return "a folder, not a file";
  if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - v) + 1 : 1, slash ? v : ".") >=
      (int)sizeof(dir))
    return "too long a path";
  if (stat(v, &sb) == 0 ? access(v, W_OK) != 0 : access(dir, W_OK | X_OK) != 0)
    return "not writable, or its folder does not exist or takes no files";
  /* tune's database (or its -wal), by any name: the table would replace it. */
  const char *db = tune_database_file(v);
  if (db != NULL) return db;
  o->out_path = v;
  return NULL;
}

#define BENCH_INT(f) NULL, offsetof(bench_opts, f)
static const bench_opt bench_opts_table[] = {
    /* name, nccl-tests' short name, value, help, then a parser or
     * BENCH_INT(field) with its min and max */
    {"--world", "-g", "W", "ranks, nccl-tests' GPUs (default 8)", BENCH_INT(world), 1,
     BENCH_MAX_WORLD},
    {"--op", NULL, "OP", "all_gather|all_reduce|reduce_scatter|all (default all)", opt_op, 0, 0, 0},
    {"--dtype", "-d", "T", "bf16|fp16|fp32, or bfloat16|half|float (default bf16)", opt_dtype, 0, 0,
     0},
    {"--sizes", NULL, "LIST", "nccl-tests sizes, e.g. 1K,64K,256M (default 1K..256M by 4x)",
     opt_sizes, 0, 0, 0},
    {"--minbytes", "-b", "SIZE", "nccl-tests' begin size (default 1K)", opt_begin, 0, 0, 0},
    {"--maxbytes", "-e", "SIZE", "nccl-tests' end size (default 256M)", opt_end, 0, 0, 0},
    {"--stepfactor", "-f", "F", "nccl-tests' size factor, 2..1024 (default 4)", opt_factor, 0, 0,
     0},
    {"--iters", "-n", "N", "timed trials, >= 100 (default 100)", BENCH_INT(iters), 100, 1000000},
    {"--warmup", "-w", "N", "warm-up trials before them (default 10)", BENCH_INT(warmup), 0,
     1000000},
    {"--mode", NULL, "M", "eager|graph|both (default both)", opt_mode, 0, 0, 0},
    {"--graph-calls", NULL, "K", "calls per captured graph (default 20)", BENCH_INT(graph_calls), 1,
     10000},
    {"--threads", NULL, "N", "detcoll threads per block, 0 (default), 512 or 1024",
     BENCH_INT(threads), 0, 1024},
    {"--max-blocks", NULL, "B", "detcoll grid bound, 0: its default", BENCH_INT(max_blocks), 0,
     BENCH_MAX_BLOCKS},
    {"--impl", NULL, "LIST", "of detcoll,nccl,nccl_symm (default all three)", opt_impl, 0, 0, 0},
    {"--paths", NULL, "LIST", "detcoll rows: auto,auto_reg,<path>,... or all (default all)",
     opt_paths, 0, 0, 0},
    {"--offset", NULL, "B",
     "send and recv start B bytes into their allocations, a whole number of elements (default 0)",
     BENCH_INT(offset), 0, 4096},
    {"--check", "-c", "0|1", "check every row's last output (default 1)", BENCH_INT(check), 0, 1},
    {"--p2p", NULL, NULL, "measure peer copy rates of devices 0 and 1 first", opt_p2p, 0, 0, 0},
    {"--p2p-size", NULL, "BYTES", "bytes per --p2p copy (default 256M)", opt_p2p_size, 0, 0, 0},
    {"--out", NULL, "FILE", "write the table there (default stdout)", opt_out, 0, 0, 0},
};
#define BENCH_NOPTS (sizeof(bench_opts_table) / sizeof(bench_opts_table[0]))

static void usage(FILE *f) {
  fprintf(f, "usage: bench_detcoll [options]\n");
  for (size_t i = 0; i < BENCH_NOPTS; i++) {
    const bench_opt *t = &bench_opts_table[i];
    char names[32];
    snprintf(names, sizeof(names), "%s%s%s", t->short_name ? t->short_name : "",
             t->short_name ? ", " : "    ", t->name);
    fprintf(f, "  %-18s %-6s %s\n", names, t->arg ? t->arg : "", t->help);
  }
  fprintf(f,
          "  -h, --help\n"
          "SIZE: whole bytes, digits with an optional K, M or G (binary; KiB, KB,\n"
          "... too). --sizes and -b/-e/-f exclude each other; -b/-e/-f give begin,\n"
          "begin*F, ... up to end, as in nccl-tests (all_reduce_perf -b 8 -e 128M\n"
          "-f 2 -g 8); -b and -e need -f unless equal (nccl-tests' -i is not taken).\n"
          "Each option once; a list's items once each.\n");
}

/* Parse v into o for opt: its parser, or an int within [min, max] (what is
 * wrong with it written into buf). */
static const char *opt_value(bench_opts *o, const bench_opt *opt, const char *v, char *buf,
                             size_t len) {
  if (opt->parse) return opt->parse(o, v);
  char *end;
  long x = strtol(v, &end, 10);
  if (end == v || *end != '\0') return "not an integer";
  if (x < opt->min || x > opt->max) {
    snprintf(buf, len, "out of range (%ld..%ld)", opt->min, opt->max);
    return buf;
  }
  *(int *)((char *)o + opt->off) = (int)x;
  return NULL;
}

/* Whether the option of that long name was given. */
static int was_given(const char given[BENCH_NOPTS], const char *name) {
  for (size_t j = 0; j < BENCH_NOPTS; j++)
    if (!strcmp(bench_opts_table[j].name, name)) return given[j] != 0;
  return 0;
}

/* "bench_detcoll: " and what is wrong on stderr, then exit 2. */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void refuse(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_detcoll: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

/* The options' values against each other (given: which were given). */
static void check_together(const bench_opts *o, const char given[BENCH_NOPTS]) {
  if (o->threads != 0 && o->threads != 512 && o->threads != 1024)
    refuse("--threads '%d': not 0, 512 or 1024", o->threads);
  if (o->offset % (int)dc_dtype_size(o->dtype))
    refuse("--offset %d: not a whole number of %s elements", o->offset, dc_dtype_name(o->dtype));
  if (o->range_given && o->sizes_given) refuse("--sizes and -b/-e/-f exclude each other");
  /* Without -f, nccl-tests steps from -b to -e by a fixed increment (-i). */
  if ((was_given(given, "--minbytes") || was_given(given, "--maxbytes")) &&
      !was_given(given, "--stepfactor") && o->begin_bytes < o->end_bytes)
    refuse(
        "-b/-e without -f: nccl-tests would step by a fixed increment (-i), which "
        "bench_detcoll does not take; give -f F (sizes b, b*F, ... up to e)");
  if (was_given(given, "--graph-calls") && !o->graph)
    refuse("--graph-calls is for graph mode, and --mode is eager");
  if (was_given(given, "--p2p-size") && !o->p2p) refuse("--p2p-size is for --p2p, not given");
  if (o->begin_bytes > o->end_bytes)
    refuse("-b %zu is larger than -e %zu", o->begin_bytes, o->end_bytes);
}

static void defaults(bench_opts *o) {
  memset(o, 0, sizeof(*o));
  o->world = 8;
  o->iters = 100;
  o->warmup = 10;
  o->graph_calls = 20;
  o->check = 1;
  o->op = -1;
  o->dtype = DC_DTYPE_BF16;
  o->eager = o->graph = 1;
  o->impls = (1u << BENCH_DETCOLL) | (1u << BENCH_NCCL) | (1u << BENCH_NCCL_SYMM);
  o->paths = ~0u;
  o->p2p_bytes = (size_t)256 << 20;
  o->begin_bytes = 1024;
  o->end_bytes = (size_t)256 << 20;
  o->factor = 4;
}

void bench_parse(int argc, char **argv, bench_opts *o) {
  char given[BENCH_NOPTS] = {0};
  defaults(o);
  for (int i = 1; i < argc; i++) {
    const bench_opt *opt = NULL;
    const char *v = NULL, *err;
    char range[64];
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      exit(0);
    }
    for (size_t j = 0; j < BENCH_NOPTS && !opt; j++)
      if (!strcmp(argv[i], bench_opts_table[j].name) ||
          (bench_opts_table[j].short_name && !strcmp(argv[i], bench_opts_table[j].short_name)))
        opt = &bench_opts_table[j];
    if (!opt) {
      fprintf(stderr, "bench_detcoll: unknown option '%s'\n", argv[i]);
      usage(stderr);
      exit(2);
    }
    if (given[opt - bench_opts_table]++) {
      const char *sn = opt->short_name;
      refuse("%s%s%s%s given twice", opt->name, sn ? " (" : "", sn ? sn : "", sn ? ")" : "");
    }
    if (opt->arg) {
      if (i + 1 >= argc) refuse("%s needs a value (%s)", argv[i], opt->arg);
      v = argv[++i];
    }
    if ((err = opt_value(o, opt, v, range, sizeof(range))) != NULL)
      refuse("%s '%s': %s", argv[i - (v != NULL)], v ? v : "", err);
  }
  check_together(o, given);
  if (o->sizes_given) return;
  /* A factor >= 2 over 1..64G makes at most 37 sizes: they fit. */
  for (size_t s = o->begin_bytes; s <= o->end_bytes; s *= (size_t)o->factor)
    o->sizes[o->nsizes++] = s;
}
