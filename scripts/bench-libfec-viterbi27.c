/* Peer measurement: Phil Karn's libfec viterbi27 (K=7 r=1/2, polynomials
 * V27POLYA/V27POLYB = 0x6d/0x4f, i.e. 171/133 octal read in the other bit
 * order) decode throughput on one core, for BENCHMARKS.md. Needs Debian's
 * libfec-dev.
 *
 *     cc -O2 -o target/bench-libfec-viterbi27 scripts/bench-libfec-viterbi27.c -lfec -lm
 *     taskset -c 1 target/bench-libfec-viterbi27 [INFO_BITS]
 *
 * Frames of 2048 bits plus the 6-bit tail (terminated), random bits encoded
 * with libfec's own convention, BPSK over AWGN at Eb/N0 = 3 dB, quantized to
 * the 8-bit offset-binary symbols libfec expects (0 = strong 0, 255 = strong
 * 1). Every decoded bit is compared with the sent one and the BER printed, so
 * a misconfigured decoder cannot pass unnoticed. Only decoding (init, update,
 * chainback) is timed.
 */
#include <fec.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FRAME 2048
#define TAIL 6
#define SET 64 /* distinct noisy frames, decoded in turn */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double gauss(void) { /* Box-Muller, fixed seed via srand */
    double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = (rand() + 1.0) / (RAND_MAX + 2.0);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

int main(int argc, char **argv) {
    long bits = argc > 1 ? atol(argv[1]) : 20000000;
    long frames = bits / FRAME;
    double sigma = sqrt(1.0 / (2.0 * 0.5 * pow(10.0, 0.3))); /* Eb/N0 3 dB, rate 1/2 */
    static unsigned char info[SET][FRAME / 8], syms[SET][2 * (FRAME + TAIL)], out[FRAME / 8];
    srand(1);
    for (int f = 0; f < SET; f++) {
        unsigned int state = 0;
        for (int i = 0; i < FRAME + TAIL; i++) {
            int bit = i < FRAME ? rand() & 1 : 0;
            if (i < FRAME && bit) info[f][i / 8] |= 0x80 >> (i % 8);
            state = (state << 1) | bit;
            int c[2] = {parity(state & V27POLYA), parity(state & V27POLYB)};
            for (int k = 0; k < 2; k++) {
                double y = (c[k] ? -1.0 : 1.0) + sigma * gauss();
                long s = lround(128.0 - 48.0 * y);
                syms[f][2 * i + k] = s < 0 ? 0 : s > 255 ? 255 : s;
            }
        }
    }
    void *vp = create_viterbi27(FRAME);
    if (!vp) return 1;
    long errors = 0;
    double t0 = now();
    for (long f = 0; f < frames; f++) {
        init_viterbi27(vp, 0);
        update_viterbi27_blk(vp, syms[f % SET], FRAME + TAIL);
        chainback_viterbi27(vp, out, FRAME, 0);
        if (f < SET)
            for (int i = 0; i < FRAME / 8; i++) errors += __builtin_popcount(out[i] ^ info[f][i]);
    }
    double dt = now() - t0;
    printf("libfec viterbi27 (Debian libfec0, portable C) frames of %d, terminated: %.1f Mb/s "
           "(%ld bits in %.2f s; BER %.2e over the first %d frames)\n",
           FRAME, frames * FRAME / dt / 1e6, frames * FRAME, dt, (double)errors / (SET * FRAME), SET);
    delete_viterbi27(vp);
    return 0;
}
