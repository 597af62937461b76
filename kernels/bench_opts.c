/* bench_opts.c: the command line of bench_detcoll (bench_opts.h): one table
 * of options, nccl-tests' -b/-e/-f/-g among them. */
#include "bench_opts.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char *opt_sizes(bench_opts *o, const char *v) {
  const char *err = NULL;
  char *dup = strdup(v), *save = NULL;
  if (!dup) return "out of memory";
  o->nsizes = 0;
  o->sizes_given = 1;
  for (char *t = strtok_r(dup, ",", &save); t && !err; t = strtok_r(NULL, ",", &save))
    err =
        o->nsizes == BENCH_MAX_SIZES ? "more than 64 sizes" : parse_size(t, &o->sizes[o->nsizes++]);
  free(dup);
  return err ? err : o->nsizes == 0 ? "no sizes" : NULL;
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

static const char *opt_impl(bench_opts *o, const char *v) {
  const char *err = NULL;
  char *dup = strdup(v), *save = NULL;
  if (!dup) return "out of memory";
  o->impls = 0;
  for (char *t = strtok_r(dup, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
    if (!strcmp(t, "detcoll"))
      o->impls |= 1u << BENCH_DETCOLL;
    else if (!strcmp(t, "nccl"))
      o->impls |= 1u << BENCH_NCCL;
    else if (!strcmp(t, "nccl_symm"))
      o->impls |= 1u << BENCH_NCCL_SYMM;
    else
      err = "not a list of detcoll, nccl, nccl_symm";
  }
  free(dup);
  return err ? err : o->impls ? NULL : "empty list";
}

static const char *opt_paths(bench_opts *o, const char *v) {
  const char *err = NULL;
  char *dup = strdup(v), *save = NULL;
  if (!dup) return "out of memory";
  o->paths = 0;
  for (char *t = strtok_r(dup, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
    int p = dc_path_parse(t);
    if (!strcmp(t, "all"))
      o->paths = ~0u;
    else if (!strcmp(t, "auto_reg"))
      o->paths |= 1u << BENCH_AUTO_REG;
    else if (p >= 0)
      o->paths |= 1u << p;
    else
      err =
          "not a list of auto, auto_reg, detcoll path names (single_block, one_shot, direct, ...) "
          "or all";
  }
  free(dup);
  return err ? err : o->paths ? NULL : "empty list";
}

static const char *opt_p2p(bench_opts *o, const char *v) {
  (void)v;
  o->p2p = 1;
  return NULL;
}

static const char *opt_p2p_size(bench_opts *o, const char *v) {
  const char *err = parse_size(v, &o->p2p_bytes);
  if (!err && o->p2p_bytes < 16) err = "below 16 bytes";
  o->p2p_bytes &= ~(size_t)15;
  return err;
}

static const char *opt_out(bench_opts *o, const char *v) {
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
          "-f 2 -g 8).\n");
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

void bench_parse(int argc, char **argv, bench_opts *o) {
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
    if (opt->arg) {
      if (i + 1 >= argc) {
        fprintf(stderr, "bench_detcoll: %s needs a value (%s)\n", argv[i], opt->arg);
        exit(2);
      }
      v = argv[++i];
    }
    err = opt_value(o, opt, v, range, sizeof(range));
    if (err) {
      fprintf(stderr, "bench_detcoll: %s '%s': %s\n", argv[i - (v != NULL)], v ? v : "", err);
      exit(2);
    }
  }
  if (o->threads != 0 && o->threads != 512 && o->threads != 1024) {
    fprintf(stderr, "bench_detcoll: --threads '%d': not 0, 512 or 1024\n", o->threads);
    exit(2);
  }
  if (o->offset % (int)dc_dtype_size(o->dtype)) {
    fprintf(stderr, "bench_detcoll: --offset %d: not a whole number of %s elements\n", o->offset,
            dc_dtype_name(o->dtype));
    exit(2);
  }
  if (o->range_given && o->sizes_given) {
    fprintf(stderr, "bench_detcoll: --sizes and -b/-e/-f exclude each other\n");
    exit(2);
  }
  if (o->begin_bytes > o->end_bytes) {
    fprintf(stderr, "bench_detcoll: -b %zu is larger than -e %zu\n", o->begin_bytes, o->end_bytes);
    exit(2);
  }
  if (o->sizes_given) return;
  /* A factor >= 2 over 1..64G makes at most 37 sizes: they fit. */
  for (size_t s = o->begin_bytes; s <= o->end_bytes; s *= (size_t)o->factor)
    o->sizes[o->nsizes++] = s;
}
