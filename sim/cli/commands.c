#include "config.h"

#include <stddef.h>

#include "commands.h"

const CsCommand cs_commands[] = {
    {"codecs", "run the real gradient codecs: compression, speed, error", cs_cmd_codecs},
    {NULL, NULL, NULL},
};
