/* Peer measurement: GNU Radio's gr-fec cc_decoder (K=7 r=1/2, polynomials
 * 109/79, which is 171/133 octal in GNU Radio's bit order; VOLK's
 * volk_8u_x4_conv_k7_r2_8u kernel) decode throughput on one core, calling the
 * decoder object directly, without a flowgraph. Needs Debian's gnuradio-dev.
 *
 *     g++ -O2 -o target/bench-gnuradio-cc-decoder scripts/bench-gnuradio-cc-decoder.cpp \
 *         -lgnuradio-fec -lgnuradio-runtime -lfmt
 *     taskset -c 1 target/bench-gnuradio-cc-decoder [INFO_BITS]
 *
 * Terminated frames of 2048 bits: random bits through GNU Radio's own
 * cc_encoder, BPSK over AWGN at Eb/N0 = 3 dB, converted as gr-fec's
 * extended_decoder does for a "uchar" decoder (48·y + 128, clipped; bit 1 maps
 * to +1 as digital.map_bb([-1, 1]) does). Every decoded bit is compared with
 * the sent one and the BER printed. Only generic_work (the decode) is timed.
 */
#include <gnuradio/fec/cc_decoder.h>
#include <gnuradio/fec/cc_encoder.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv)
{
    const int frame = 2048, set = 64;
    long bits = argc > 1 ? std::atol(argv[1]) : 20000000;
    long frames = bits / frame;
    auto enc = gr::fec::code::cc_encoder::make(frame, 7, 2, { 109, 79 }, 0, CC_TERMINATED, false);
    auto dec = gr::fec::code::cc_decoder::make(frame, 7, 2, { 109, 79 }, 0, -1, CC_TERMINATED, false);
    const int coded = enc->get_output_size(), in = dec->get_input_size(), out = dec->get_output_size();
    if (coded != in || out != frame) {
        std::fprintf(stderr, "unexpected sizes: encoder %d, decoder %d -> %d\n", coded, in, out);
        return 1;
    }
    double sigma = std::sqrt(1.0 / (2.0 * 0.5 * std::pow(10.0, 0.3))); // Eb/N0 3 dB, rate 1/2
    std::mt19937_64 rng(1);
    std::normal_distribution<double> noise(0.0, sigma);
    std::vector<std::vector<unsigned char>> info(set, std::vector<unsigned char>(frame));
    std::vector<std::vector<unsigned char>> syms(set, std::vector<unsigned char>(in));
    std::vector<unsigned char> code(coded), decoded(out);
    for (int f = 0; f < set; f++) {
        for (auto& b : info[f])
            b = rng() & 1;
        enc->generic_work(info[f].data(), code.data());
        for (int i = 0; i < coded; i++) {
            double y = (code[i] ? 1.0 : -1.0) + noise(rng);
            long s = std::lround(48.0 * y + 128.0);
            syms[f][i] = s < 0 ? 0 : s > 255 ? 255 : s;
        }
    }
    long errors = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (long f = 0; f < frames; f++) {
        dec->generic_work(syms[f % set].data(), decoded.data());
        if (f < set)
            for (int i = 0; i < frame; i++)
                errors += (decoded[i] & 1) != info[f][i];
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("gr-fec cc_decoder (decoder object, VOLK) frames of %d, terminated: %.1f Mb/s "
                "(%ld bits in %.2f s; BER %.2e over the first %d frames)\n",
                frame, frames * frame / dt / 1e6, frames * frame, dt, double(errors) / (set * frame), set);
    return 0;
}
