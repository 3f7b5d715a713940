#include "config.h"

#include <stddef.h>

#include "commands.h"

const CsCommand cs_commands[] = {
    {"codecs", "run the real gradient codecs: compression, speed, error", cs_cmd_codecs},
    {"model", "closed-form (alpha-beta) estimate of a scenario, with its formula", cs_cmd_model},
    {"plot", "draw PNG plots (gnuplot) from a run or sweep folder", cs_cmd_plot},
    {"sweep", "run every point of a scenario's sweep: grid, in parallel", cs_cmd_sweep},
    {"run", "simulate one scenario, print a summary, write CSV files", cs_cmd_run},
    {"validate", "load and check a scenario, print its topology summary", cs_cmd_validate},
    {"keys", "list every scenario key: its default, its values, what it means", cs_cmd_keys},
    {NULL, NULL, NULL},
};
