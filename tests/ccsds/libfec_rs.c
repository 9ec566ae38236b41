/* Reference Reed–Solomon parity from Phil Karn's libfec (Debian libfec-dev):
 * prints, for each case, "basis n data-hex parity-hex". Cases: the data
 * bytes (i*29+7) mod 256 at lengths 223 (unshortened) and 114 (BY70-1's
 * shortening), in both bases. Build: cc libfec_rs.c -lfec */
#include <fec.h>
#include <stdio.h>

static void hex(const unsigned char *p, int n) {
    for (int i = 0; i < n; i++) printf("%02x", p[i]);
}

int main(void) {
    unsigned char data[223], parity[32];
    for (int i = 0; i < 223; i++) data[i] = (unsigned char)(i * 29 + 7);
    int ks[2] = {223, 114};
    for (int c = 0; c < 2; c++) {
        int k = ks[c];
        encode_rs_8(data, parity, 223 - k);
        printf("conventional %d ", k + 32); hex(data, k); printf(" "); hex(parity, 32); printf("\n");
        encode_rs_ccsds(data, parity, 223 - k);
        printf("dual %d ", k + 32); hex(data, k); printf(" "); hex(parity, 32); printf("\n");
    }
    printf("taltab "); hex(Taltab, 256); printf("\n");
    return 0;
}
