/*
** runname.c: the run's name graphshim gives its report, for tests/cli/run.sh.
**
**   runname FILE        prints FILE's user.graphshim.run attribute; exits 1 if
**                       it has none
**   runname --can DIR   exits 0 if DIR's file system keeps user attributes
*/
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char name[512], probe[4096];
    FILE *f;
    ssize_t n;
    int ok;

    if (argc == 3 && strcmp(argv[1], "--can") == 0) {
        snprintf(probe, sizeof probe, "%s/.runname-probe", argv[2]);
        if (!(f = fopen(probe, "w")))
            return 1;
        fclose(f);
        ok = setxattr(probe, "user.graphshim.probe", "1", 1, 0) == 0;
        unlink(probe);
        return ok ? 0 : 1;
    }
    if (argc != 2 || (n = getxattr(argv[1], "user.graphshim.run", name, sizeof name - 1)) < 0)
        return 1;
    name[n] = '\0';
    puts(name);
    return 0;
}
