/*
** lateload.c: loads libgraphshim.so the wrong way, for tests/cli/run.sh.
**
**   lateload LIB [cuda-first]
**     LIB         the library to dlopen while the program runs, or - for none
**                 (then it is expected preloaded)
**     cuda-first  dlopen libcuda.so.1 before it, as a program that already
**                 used the driver
**
** Prints "loaded" and exits 0 once both are loaded; 2 or 3 if one cannot be.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2 && strcmp(argv[2], "cuda-first") == 0 && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "lateload: %s\n", dlerror());
        return 3;
    }
    if (strcmp(argv[1], "-") != 0 && !dlopen(argv[1], RTLD_NOW)) {
        fprintf(stderr, "lateload: %s\n", dlerror());
        return 2;
    }
    puts("loaded");
    return 0;
}
