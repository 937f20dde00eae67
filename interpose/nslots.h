/*
** nslots.h: how many trampoline slots are handed out at run time (shared by
** trampoline.S, which lays them out, and slots.c, which hands them out).
*/
#ifndef GS_NSLOTS
#define GS_NSLOTS 4096
#endif
