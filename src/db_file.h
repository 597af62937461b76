/* db_file.h: whether a path is a database's file that no output may
 * replace. Plain C and libc only: tune and bench_detcoll share it. */
#ifndef TUNE_DB_FILE_H
#define TUNE_DB_FILE_H

/* Why path (or the file it leads to) is a database's file that no output
 * may replace, NULL if it is none: an SQLite database, or the -wal, -shm
 * or -journal SQLite keeps beside one (a crashed job's committed data may
 * be all in its -wal). */
const char *tune_database_file(const char *path);

#endif /* TUNE_DB_FILE_H */
