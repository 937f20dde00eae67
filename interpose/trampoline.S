/*
** trampoline.S: signature-agnostic wrappers for driver entry points (x86-64 SysV).
**
** A trampoline stands in for an entry point whose signature graphshim does not
** know.  Each slot is a 16-byte stub that loads its slot number into %r11 and jumps
** to gs__tramp_common, which
**   1. saves the argument registers (integer and vector),
**   2. calls gs__tramp_enter(slot) (tramp_guard.c): the guard runs, and the real
**      pointer comes back (NULL when the driver lacks the entry point),
**   3. restores the arguments, copies 16 stack-argument words, and calls the real
**      function,
**   4. calls gs__tramp_leave(slot, result) and returns the driver's result.
** Every driver entry point returns CUresult (an int in %eax), so a missing one
** returns CUDA_ERROR_NOT_FOUND.
**
** Slots 0 .. GS_NPASS-1 belong to the GS_PASS rows of hooks.def, the next ones to
** the driver names of cuda.h that hooks.def does not list (driver_names.def,
** generated): both are exported under their ABI names for programs linked with
** -lcuda.  The remaining slots are handed out at run time (slots.c) for entry
** points obtained through dlsym or cuGetProcAddress.  The slots' table, and what
** a slot's stub is for a program, are C (slots.c, lookup.c); so is the exported
** dlsym (dlsym.c).
*/
#include "nslots.h"

        .text
        .p2align 4
        .type gs__tramp_common, @function
gs__tramp_common:
        push    %rbp
        mov     %rsp, %rbp
        push    %rbx
        push    %r12
        sub     $192, %rsp                 /* keeps %rsp 16-byte aligned at the calls below */
        movdqu  %xmm0, 0(%rsp)
        movdqu  %xmm1, 16(%rsp)
        movdqu  %xmm2, 32(%rsp)
        movdqu  %xmm3, 48(%rsp)
        movdqu  %xmm4, 64(%rsp)
        movdqu  %xmm5, 80(%rsp)
        movdqu  %xmm6, 96(%rsp)
        movdqu  %xmm7, 112(%rsp)
        mov     %rdi, 128(%rsp)
        mov     %rsi, 136(%rsp)
        mov     %rdx, 144(%rsp)
        mov     %rcx, 152(%rsp)
        mov     %r8, 160(%rsp)
        mov     %r9, 168(%rsp)
        mov     %rax, 176(%rsp)
        mov     %r11, %rbx
        mov     %r11, %rdi
        call    gs__tramp_enter
        mov     %rax, %r12
        movdqu  0(%rsp), %xmm0
        movdqu  16(%rsp), %xmm1
        movdqu  32(%rsp), %xmm2
        movdqu  48(%rsp), %xmm3
        movdqu  64(%rsp), %xmm4
        movdqu  80(%rsp), %xmm5
        movdqu  96(%rsp), %xmm6
        movdqu  112(%rsp), %xmm7
        mov     128(%rsp), %rdi
        mov     136(%rsp), %rsi
        mov     144(%rsp), %rdx
        mov     152(%rsp), %rcx
        mov     160(%rsp), %r8
        mov     168(%rsp), %r9
        mov     176(%rsp), %rax
        test    %r12, %r12
        jz      .Lmissing
        sub     $128, %rsp                 /* the caller's stack arguments, 16 words */
        .irp    i, 0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120
        mov     16+\i(%rbp), %r10
        mov     %r10, \i(%rsp)
        .endr
        call    *%r12
        add     $128, %rsp
        mov     %eax, %r12d
        mov     %rbx, %rdi
        mov     %eax, %esi
        call    gs__tramp_leave
        mov     %r12d, %eax
        jmp     .Lout
.Lmissing:
        mov     $500, %eax                 /* CUDA_ERROR_NOT_FOUND */
.Lout:
        add     $192, %rsp
        pop     %r12
        pop     %rbx
        pop     %rbp
        ret
        .size gs__tramp_common, .-gs__tramp_common

/* The slots.  Exported ones first, named; then anonymous ones up to GS_NSLOTS. */
        .p2align 4
        .globl gs__tramp_base
        .hidden gs__tramp_base
gs__tramp_base:
        .set    gs_slotno, 0

#define GS_SLOT_NAMED(abi)              \
        .p2align 4;                     \
        .globl abi;                     \
        .type abi, @function;           \
abi:    mov $gs_slotno, %r11d;          \
        jmp gs__tramp_common;           \
        .size abi, .-abi;               \
        .set gs_slotno, gs_slotno + 1;

#define GS_HOOK(name, abi, ver, pt, cls, params, args, stream)
#define GS_HAND(name, abi, ver, pt, cls)
#define GS_PASS(name, abi, ver, pt, cls) GS_SLOT_NAMED(abi)
#include "hooks.def"
#define GS_DRIVER(abi) GS_SLOT_NAMED(abi)
#include "driver_names.def"

        .rept   GS_NSLOTS
        .p2align 4
        mov     $gs_slotno, %r11d
        jmp     gs__tramp_common
        .set    gs_slotno, gs_slotno + 1
        .endr

        .section .note.GNU-stack, "", @progbits
