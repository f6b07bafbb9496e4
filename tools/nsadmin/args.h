/* Command-line options, parsed the way mqadmin's commons-cli DefaultParser does, so that
 * mqadmin command lines work unchanged: "-t X", "-tX", "-t=X", "--topic X", "--topic=X",
 * "-topic X" (a long name after one dash), unique prefixes of long names ("--top X"), bundled
 * flags ("-lh"), short names of several letters ("-bn X"). An option given twice keeps its first
 * value, as getOptionValue does.
 *
 * Stricter than mqadmin in one way: a word that is neither an option nor an option's value is
 * a usage error (mqadmin ignores it), so that "nsadmin topicRoute TopicA" does not silently
 * do something else than meant. Pure functions, no I/O. */
#ifndef NSA_ARGS_H
#define NSA_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "ns_buf.h"

/* One option of a command. Every option has a long name (the key the command looks it up by).
 * A short name may be longer than one letter, as commons-cli allows: mqadmin's electMaster has
 * both -b (brokerId) and -bn (brokerName). */
typedef struct nsa_opt {
    const char *short_name; /* NULL: long only; "b", "bn" */
    const char *long_name;  /* never NULL */
    const char *arg_name;   /* NULL: a flag; else the value's name in the usage ("topic") */
    bool required;          /* "Missing required option: t" when absent */
    const char *desc;       /* one line for the usage */
} nsa_opt_t;

#define NSA_MAX_OPTS 32

/* The parsed command line. Values point into argv (not copied). */
typedef struct nsa_args {
    const nsa_opt_t *opts; /* the option table parsed against (not owned) */
    size_t nopts;
    bool seen[NSA_MAX_OPTS];
    const char *value[NSA_MAX_OPTS]; /* first value of an option with an argument */
} nsa_args_t;

/* Parses argv[0..argc) (the words after the command name) against opts[0..nopts)
 * (nopts <= NSA_MAX_OPTS). Returns 0, or -1 with commons-cli's message in err: "Unrecognized
 * option: -x", "Missing argument for option: t", "Ambiguous option: '--t'  (could be: 'topic',
 * 'timeout')", "Missing required option: t" / "Missing required options: t, c", or ours:
 * "Unexpected argument: X". */
int nsa_args_parse(nsa_args_t *a, const nsa_opt_t *opts, size_t nopts, int argc, char **argv,
                   char *err, size_t errlen);

/* Whether the option with this long name was given. */
bool nsa_args_has(const nsa_args_t *a, const char *long_name);

/* The option's value, or NULL when it was not given (or is a flag). */
const char *nsa_args_get(const nsa_args_t *a, const char *long_name);

/* Appends the usage of a command: "usage: nsadmin <cmd> [-h] -t <topic> ...", then one line per
 * option, as commons-cli's HelpFormatter lays them out. */
void nsa_args_usage(ns_buf_t *out, const char *cmd, const nsa_opt_t *opts, size_t nopts);

/* Copies s with Java's String.trim() applied (every char <= ' ' cut at both ends). */
char *nsa_trim_dup(const char *s);

#endif
