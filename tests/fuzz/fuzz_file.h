/* The readers take a path: each input becomes an in-memory file (memfd),
 * opened through /proc/self/fd, so that a run touches no disk. */
#ifndef SS_FUZZ_FILE_H
#define SS_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes size bytes of data to a fresh in-memory file; fills path with a
 * name that opens it and returns its descriptor (close it after). */
static int fuzz_file(const uint8_t *data, size_t size, char path[64])
{
        int fd = memfd_create("fuzz-input", 0);
        if (fd < 0) {
                perror("memfd_create");
                abort();
        }
        size_t done = 0;
        while (done < size) {
                ssize_t k = write(fd, data + done, size - done);
                if (k <= 0) {
                        perror("write");
                        abort();
                }
                done += (size_t)k;
        }
        snprintf(path, 64, "/proc/self/fd/%d", fd);
        return fd;
}

#endif
