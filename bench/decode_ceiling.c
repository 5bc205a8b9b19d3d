/* The decoder's ceiling: a plain libjpeg-turbo loop decoding every file of a folder list to RGB at full
 * size, files already in memory, one thread. Built and run by bench/loader_vs_torchvision.py.
 * Usage: decode_ceiling ROUNDS FILE... ; prints "images/s N". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <turbojpeg.h>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int rounds = atoi(argv[1]), n = argc - 2;
  unsigned char** data = calloc(n, sizeof *data);
  unsigned long* size = calloc(n, sizeof *size);
  for (int i = 0; i < n; ++i) {
    FILE* f = fopen(argv[i + 2], "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    size[i] = ftell(f);
    fseek(f, 0, SEEK_SET);
    data[i] = malloc(size[i]);
    if (fread(data[i], 1, size[i], f) != size[i]) return 1;
    fclose(f);
  }
  tjhandle h = tjInitDecompress();
  unsigned char* out = malloc(4096 * 4096 * 3);
  struct timespec t0, t1;
  long done = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      int w, hgt, ss, cs;
      if (tjDecompressHeader3(h, data[i], size[i], &w, &hgt, &ss, &cs) != 0) continue;
      if ((long)w * hgt > 4096L * 4096L) continue;
      if (tjDecompress2(h, data[i], size[i], out, w, 0, hgt, TJPF_RGB, 0) == 0) ++done;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("images/s %.1f\n", done / s);
  return 0;
}
