/*
** dlsym.c: the dlsym hook: the exported dlsym, and what it answers for any handle
** but RTLD_NEXT.
**
** dlsym(RTLD_NEXT, name) means "the next definition after the caller's object",
** and glibc finds the caller by the return address: so RTLD_NEXT goes to the real
** dlsym by a jump, with the caller's return address in place.  It gives exactly
** what it would without graphshim, and for driver names that is graphshim's
** exported wrapper whenever the caller comes before graphshim.  (An emulation
** that searched the objects after the caller would call dlopen, which tools such
** as compute-sanitizer interpose and call dlsym from: they would be entered again
** and wait on themselves.)  Every other handle goes to gs__dlsym, which hands back
** wrappers for driver names (lookup.c).  The jump needs a few instructions of
** assembly (x86-64 SysV), here beside the C they jump to.
*/
#include "interpose.h"

/* dlsym with any handle but RTLD_NEXT: the real result, or for a driver entry
** point of a loaded libcuda, its wrapper. */
void *gs__dlsym(void *handle, const char *name)
{
    void *r = gs__dlsym_real(handle, name);

    /* Only driver entry points (cu + capital letter) from a loaded libcuda. */
    if (!r || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z' || gs__tls.depth)
        return r;
    if (!atomic_load_explicit(&gs__ready, memory_order_acquire)) {
        if (!gs__libcuda_loaded())
            return r;
        gs__init();
    }
    if (!gs__in_libcuda(r))
        return r;
    return gs__wrap_symbol(name, r);
}

/* The exported dlsym.  Before graphshim's constructor ran, gs__real_dlsym is
** still NULL: it is looked up first (the arguments kept), and without it the
** answer is NULL. */
__asm__(".pushsection .text\n"
        "        .p2align 4\n"
        "        .globl dlsym\n"
        "        .type dlsym, @function\n"
        "dlsym:\n"
        "        cmpq    $-1, %rdi\n"          /* RTLD_NEXT */
        "        jne     gs__dlsym\n"
        "        movq    gs__real_dlsym(%rip), %rax\n"
        "        testq   %rax, %rax\n"
        "        jnz     2f\n"
        "        push    %rdi\n"
        "        push    %rsi\n"
        "        sub     $8, %rsp\n"
        "        call    gs__resolve_dlsym\n"
        "        add     $8, %rsp\n"
        "        pop     %rsi\n"
        "        pop     %rdi\n"
        "        movq    gs__real_dlsym(%rip), %rax\n"
        "        testq   %rax, %rax\n"
        "        jz      1f\n"
        "2:      jmp     *%rax\n"
        "1:      xor     %eax, %eax\n"
        "        ret\n"
        "        .size dlsym, .-dlsym\n"
        ".popsection\n");
