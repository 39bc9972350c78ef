/* common: the plotting scripts the tools call (the Python scripts in scripts/, with python3-matplotlib), found in
 * the source tree ($SEER_SOURCE_DIR, else the one the tools were built from). A missing script or
 * Python is one line, never an error: a plot is a convenience, the numbers are in the files. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

int seer_plot(const char *script, const char *args, const char *what, FILE *msg) {
    const char *src = getenv("SEER_SOURCE_DIR");
    char path[1200], cmd[4096];
    snprintf(path, sizeof path, "%s/scripts/%s", src ? src : SEER_SOURCE_DIR, script);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %s > /dev/null 2>&1", path, args);
    fflush(stdout);
    if (access(path, R_OK) == 0 && system(cmd) == 0) {
        fprintf(msg, "plot: %s\n", what);
        return 0;
    }
    fprintf(msg, "plot: %s not drawn (needs /usr/bin/python3 with matplotlib and h5py: apt-get install "
           "python3-matplotlib python3-h5py)\n", what);
    return -1;
}
