#include "config.h"

#include <stddef.h>

#include "commands.h"

const CsCommand cs_commands[] = {
    {NULL, NULL, NULL},
};
