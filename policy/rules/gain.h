/*
** gain.h: the gain check at synchronizes (gain.c): a sequence whose graph runs
** slower than its ops did eagerly runs eagerly for good.
*/
#ifndef GS_GAIN_H
#define GS_GAIN_H

#include "../stream/stream.h"

/* After a stream synchronize returned successfully: the segment it ended is timed. */
void gs__gain_synced(CUstream stream);
/* After a context synchronize returned successfully: every stream's segment that
** ended at it. */
void gs__gain_ctx_synced(void);

#endif
