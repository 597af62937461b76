/* verify.h: `tune verify` -- whether the thresholds compiled in are still
 * right on this machine (issue 14). */
#ifndef TUNE_VERIFY_H
#define TUNE_VERIFY_H

/* The subcommand: exit status 0 (every size within the tolerance), 1 (a
 * size whose regret is decided above it, or a wrong result), 2 (usage),
 * 128 + signal when interrupted. */
int tune_cmd_verify(int argc, char **argv);

#endif /* TUNE_VERIFY_H */
